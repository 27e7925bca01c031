// The app's IPC answered without Tauri (a component test, the browser preview), through Tauri's
// own mock (`mockIPC`): the app runs its real Tauri backend (`tauriBackend()` in api.ts), and each
// command it sends gets the answer given here, as the host would send it back.

import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import type { Change } from "./api";

/** A command's arguments, as the app sends them. */
export type Args = Record<string, unknown>;
/** The answer to one command: a value (or a promise of one); what it throws, the app receives as the error. */
export type Handler = (args: Args) => unknown;

export interface Ipc {
  /** Every command the app sent, in order, with its arguments. */
  calls: { cmd: string; args: Args }[];
  /** The arguments of each call of `cmd`, in order. */
  args(cmd: string): Args[];
  /** Answers `cmd` from now on, in place of any earlier answer. */
  on(cmd: string, handler: Handler): void;
  /** Sends an event as the host does (`assent://quit-requested`, ...). */
  emit(event: string, payload: unknown): Promise<void>;
  /** Sends an engine event, as the host does on `assent://event`. */
  change(c: Change): Promise<void>;
}

/** What crosses the IPC is JSON: the app never shares an object with whoever answers. */
function wire<T>(v: T): T {
  return v === undefined ? (null as T) : JSON.parse(JSON.stringify(v));
}

/** Answers each command with its handler; a command with none fails, as an unknown command does. */
export function answer(handlers: Record<string, Handler>): Ipc {
  const table = new Map(Object.entries(handlers));
  const calls: Ipc["calls"] = [];
  clearMocks();
  mockIPC(
    async (cmd, payload) => {
      const args = wire((payload ?? {}) as Args);
      calls.push({ cmd, args });
      const handler = table.get(cmd);
      if (!handler) throw { code: "unanswered", message: `no answer for \`${cmd}\` here` };
      return wire(await handler(args));
    },
    { shouldMockEvents: true },
  );
  return {
    calls,
    args: (cmd) => calls.filter((c) => c.cmd === cmd).map((c) => c.args),
    on: (cmd, handler) => void table.set(cmd, handler),
    emit: (event, payload) => emit(event, wire(payload)),
    change: (c) => emit("assent://event", wire(c)),
  };
}
