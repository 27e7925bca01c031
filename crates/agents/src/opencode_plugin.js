// Assent's plugin for OpenCode: every tool call waits for Assent (a person, or a rule of theirs)
// before it runs, and runs as they decided. Made by `assent hook opencode --plugin`; save it as
// ~/.config/opencode/plugin/assent.js.
//
// Before each call it runs Assent's hook with the call on its standard input, and:
// - a call Assent does not allow is not run: the model reads why;
// - an allowed call runs with the arguments Assent gives (the person's edit, or a confined run);
// - if the hook cannot answer (not found, failed, said nothing it can read), the call is not run.
import { spawn } from "node:child_process"

const ARGV = "__ASSENT_ARGV__"

function ask(call) {
  return new Promise((resolve, reject) => {
    const hook = spawn(ARGV[0], ARGV.slice(1), { stdio: ["pipe", "pipe", "inherit"] })
    let out = ""
    hook.stdout.on("data", (d) => {
      out += d
    })
    hook.on("error", reject)
    hook.on("close", (code) => {
      if (code !== 0) return reject(new Error(`Assent's hook exited with ${code}`))
      // Nothing said: a tool the hook does not gate (its read-only tools, or --skip).
      if (out.trim() === "") return resolve({ decision: "allow" })
      try {
        resolve(JSON.parse(out))
      } catch {
        reject(new Error("Assent's hook said something that is not JSON"))
      }
    })
    hook.stdin.end(JSON.stringify(call))
  })
}

export const Assent = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    let answer
    try {
      answer = await ask({ tool: input.tool, sessionID: input.sessionID, callID: input.callID, args: output.args, directory })
    } catch (e) {
      throw new Error(`Not run: ${e.message}`)
    }
    if (answer.decision !== "allow") throw new Error(answer.reason || "Not run: Assent did not allow it")
    if (answer.args && typeof answer.args === "object") {
      // In place: OpenCode runs the object it handed over.
      for (const k of Object.keys(output.args)) delete output.args[k]
      Object.assign(output.args, answer.args)
    }
  },
})
