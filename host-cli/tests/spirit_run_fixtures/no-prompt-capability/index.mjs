// Has a system prompt but does not request `system-prompt`: Spirit never asks for it,
// so this module is not even loaded (it writes a marker file when it is).
import { writeFileSync } from "node:fs";

if (process.env.SPIRIT_TEST_MARKER) writeFileSync(process.env.SPIRIT_TEST_MARKER, "loaded\n");

export function activate() {
  return { systemPrompt: "Never collected." };
}
