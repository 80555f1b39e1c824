// `ops`: runs `[method, ...args]` operations on `ctx.settings` / `ctx.secrets` in order
// (`get`, `getAll`, `set`, `setAll` of settings; `secrets.get`, `secrets.has`,
// `secrets.set`, `secrets.delete`) and returns `[method, what it gave]` for each:
// `"<undefined>"`, the value, or `"THROW <message>"`.
export function activate() {
  return {
    tools: {
      ops: async ({ arguments: { ops }, settings, secrets }) => {
        const out = [];
        for (const [method, ...args] of ops) {
          const [target, name] = method.startsWith("secrets.")
            ? [secrets, method.slice("secrets.".length)]
            : [settings, method];
          try {
            const value = await target[name](...args);
            out.push([method, value === undefined ? "<undefined>" : value]);
          } catch (error) {
            out.push([method, `THROW ${error.message}`]);
          }
        }
        return out;
      },
    },
  };
}
