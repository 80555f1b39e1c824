// The Spirit docs' example extension ("activate"), made real: one tool, `lookup_item`,
// that reads the `region` setting, and a static system prompt. `package.json` says
// `"type": "module"`, so Node.js loads this file as the ES module it is.
export function activate(ctx) {
  return {
    systemPrompt: "Use lookup_item when the user asks for an item by id.",
    async invokeTool({ toolName, arguments: args, settings }) {
      if (toolName !== "lookup_item") {
        throw new Error(`Unknown tool: ${toolName}`);
      }
      const region = await settings.get("region");
      return { id: args.id, region };
    },
    dispose() {
      ctx.log("example-extension disposed");
    },
  };
}
