// Spirit calls this `activate`, which returns nothing; it never uses the other members
// of the default export object, so there is no API at all.
export default {
  activate() {},
  tools: { which: () => "never called" },
  systemPrompt: "never used",
};
