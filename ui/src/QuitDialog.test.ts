import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor } from "@testing-library/svelte";
import QuitDialog from "./QuitDialog.svelte";
import App from "./App.svelte";
import { tauriBackend } from "./api";
import { answer, type Handler, type Ipc } from "./ipc-mock";
import * as sample from "./sample";
import type { Proposal } from "./bindings/Proposal";

const dialog = () => screen.queryByRole("dialog", { name: "Quit Assent?" });

/** A quit that works, and anything else the test answers. */
const quitting = (handlers: Record<string, Handler> = {}) => answer({ quit_app: () => null, ...handlers });

/** The dialog on its own, with a quit that works (or as `handlers` answer). */
async function shown(handlers: Record<string, Handler> = {}) {
  const ipc = quitting(handlers);
  render(QuitDialog, { backend: await tauriBackend() });
  return ipc;
}

/** The host asks, as the tray's Quit does while agents wait. */
async function opened(ipc: Ipc, waiting: number, pending: number) {
  await ipc.emit("assent://quit-requested", { waiting, pending });
  await waitFor(() => expect(dialog()).not.toBeNull());
  return dialog() as HTMLElement;
}

describe("the quit confirmation", () => {
  afterEach(cleanup);

  it.each([
    ["how many agents wait and how many proposals are pending, plural", 2, 5, "2 agents are waiting for a decision (5 proposals pending). If you quit, they get no answer until Assent runs again."],
    ["it in the singular", 1, 1, "1 agent is waiting for a decision (1 proposal pending). If you quit, they get no answer until Assent runs again."],
    ["only the pending proposals when no agent is waiting", 0, 3, "3 proposals are pending. If you quit, they stay pending until Assent runs again."],
  ])("says %s", async (_, waiting, pending, text) => {
    const ipc = await shown();
    expect(dialog()).toBeNull();
    const d = await opened(ipc, waiting, pending);
    expect(d.getAttribute("aria-modal")).toBe("true");
    expect(screen.getByTestId("quit-text").textContent).toBe(text);
  });

  it("says the new counts when asked again while open", async () => {
    const ipc = await shown();
    await opened(ipc, 0, 3);
    await ipc.emit("assent://quit-requested", { waiting: 0, pending: 1 });
    await waitFor(() => expect(screen.getByTestId("quit-text").textContent).toBe("1 proposal is pending. If you quit, it stays pending until Assent runs again."));
  });

  it("focuses Keep running; Keep running closes it without quitting", async () => {
    const ipc = await shown();
    await opened(ipc, 2, 5);
    const keep = screen.getByRole("button", { name: "Keep running" });
    await waitFor(() => expect(document.activeElement).toBe(keep));
    await fireEvent.click(keep);
    await waitFor(() => expect(dialog()).toBeNull());
    expect(ipc.args("quit_app")).toHaveLength(0);
  });

  it("closes on Esc without quitting", async () => {
    const ipc = await shown();
    await opened(ipc, 2, 5);
    await fireEvent.keyDown(document.activeElement ?? document.body, { key: "Escape" });
    await waitFor(() => expect(dialog()).toBeNull());
    expect(ipc.args("quit_app")).toHaveLength(0);
  });

  it("keeps Tab inside the dialog", async () => {
    const ipc = await shown();
    await opened(ipc, 1, 2);
    const keep = screen.getByRole("button", { name: "Keep running" });
    const quit = screen.getByRole("button", { name: "Quit Assent" });
    await waitFor(() => expect(document.activeElement).toBe(keep));
    await fireEvent.keyDown(keep, { key: "Tab" });
    expect(document.activeElement).toBe(quit);
    await fireEvent.keyDown(quit, { key: "Tab", shiftKey: true });
    expect(document.activeElement).toBe(keep);
  });

  it("Quit Assent quits", async () => {
    const ipc = await shown();
    await opened(ipc, 2, 5);
    await fireEvent.click(screen.getByRole("button", { name: "Quit Assent" }));
    await waitFor(() => expect(ipc.args("quit_app")).toHaveLength(1));
  });

  it("says so when quitting fails, and stays open", async () => {
    const ipc = await shown({
      quit_app: () => {
        throw "the window could not be closed";
      },
    });
    await opened(ipc, 1, 1);
    await fireEvent.click(screen.getByRole("button", { name: "Quit Assent" }));
    expect((await screen.findByTestId("quit-error")).textContent).toBe("the window could not be closed");
    expect(dialog()).not.toBeNull();
  });

  it("in the app: the page behind waits, and its shortcuts do not act", async () => {
    const proposals = sample.inbox();
    const find = (id: unknown) => proposals.find((p) => p.id === id) as Proposal;
    const ipc = quitting({
      list_proposals: () => ({ items: proposals, next_cursor: null }),
      get_proposal: ({ id }) => sample.detail(find(id)),
      pending_count: () => 8,
      ui_ready: () => null,
      decide: ({ id }) => ({ ...sample.decided(find(id), "applied", { outcome: "approve" }), rule: null }),
    });
    const { container } = render(App, { backend: await tauriBackend() });
    await waitFor(() => expect(screen.queryAllByTestId("row").length).toBeGreaterThan(0));
    await screen.findByTestId("approve");
    await opened(ipc, 1, 8);
    const shell = container.querySelector(".shell") as HTMLElement;
    expect(shell.inert).toBe(true);
    // "a" approves in the inbox; not while the dialog asks.
    await fireEvent.keyDown(document.activeElement ?? document.body, { key: "a" });
    await fireEvent.keyDown(document.body, { key: "a" });
    expect(ipc.args("decide")).toHaveLength(0);
    await fireEvent.click(screen.getByRole("button", { name: "Keep running" }));
    await waitFor(() => expect(dialog()).toBeNull());
    expect(shell.inert).toBe(false);
    // Closed, the shortcut works again: it approves the proposal on screen.
    await fireEvent.keyDown(document.body, { key: "a" });
    await waitFor(() => expect(ipc.args("decide")).toHaveLength(1));
    expect(ipc.args("decide")[0]).toMatchObject({ id: proposals[0].id, outcome: "approve" });
  });
});
