// `activate` returns an object with no member Spirit can use (`tools.which` is not a
// function, `systemPrompt` is blank), so the module's named exports serve.
export function activate() {
  return { marker: true, tools: { which: "not a function" }, systemPrompt: "   " };
}

export const tools = { which: () => "the module's tools.which" };

export const systemPrompt = "  The module's prompt.  ";
