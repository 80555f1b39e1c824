// The system prompt chosen by SPIRIT_TEST_PROMPT: `padded` (a static prompt with
// spaces around it), `blank`, `dynamic-empty` (getSystemPrompt gives "" while
// systemPrompt is set), `throws`, `number` (getSystemPrompt gives 42), `activate-throws`.
export function activate() {
  switch (process.env.SPIRIT_TEST_PROMPT) {
    case "padded":
      return { systemPrompt: "\n  Padded prompt.  \n" };
    case "blank":
      return { systemPrompt: " \t " };
    case "dynamic-empty":
      return { systemPrompt: "Static prompt.", getSystemPrompt: async () => "" };
    case "throws":
      return {
        getSystemPrompt() {
          throw new Error("no prompt today");
        },
      };
    case "number":
      return { getSystemPrompt: () => 42 };
    case "activate-throws":
      throw new Error("activation broke");
    default:
      return { systemPrompt: "Default prompt." };
  }
}
