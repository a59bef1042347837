import { describe, expect, it } from "vitest";
import { COMMANDS, findCommandByName, runCli } from "./main.js";

describe("the command catalog", () => {
  it("names each command as its module does, once", async () => {
    for (const entry of COMMANDS) expect((await entry.load()).name).toBe(entry.name);
    expect(new Set(COMMANDS.map((entry) => entry.name)).size).toBe(COMMANDS.length);
    expect(await findCommandByName("no such")).toBeUndefined();
  });

  it("lists every command with its summary in the overview", async () => {
    let stdout = "";
    const io = {
      stdout: {
        write(chunk: string) {
          stdout += chunk;
          return true;
        },
      },
      stderr: { write: () => true },
      env: {},
    } as unknown as Parameters<typeof runCli>[1];
    expect(await runCli(["--help"], io)).toBe(0);
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect(stdout).toMatch(
        new RegExp(`^  ${command.name} +${command.summary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"),
      );
    }
  });
});
