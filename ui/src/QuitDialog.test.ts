import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor } from "@testing-library/svelte";
import QuitDialog from "./QuitDialog.svelte";
import App from "./App.svelte";
import { MockBackend } from "./mock";

const dialog = () => screen.queryByRole("dialog", { name: "Quit Assent?" });
const calls = (m: MockBackend, name: string) => m.calls.filter((c) => c.name === name);

async function opened(m: MockBackend, waiting: number, pending: number) {
  await waitFor(() => expect(m.quitListeners.length).toBeGreaterThan(0));
  m.requestQuit(waiting, pending);
  await waitFor(() => expect(dialog()).not.toBeNull());
  return dialog() as HTMLElement;
}

describe("the quit confirmation", () => {
  afterEach(cleanup);

  it("says how many agents wait and how many proposals are pending, plural", async () => {
    const m = new MockBackend();
    render(QuitDialog, { backend: m });
    expect(dialog()).toBeNull();
    const d = await opened(m, 2, 5);
    expect(d.getAttribute("aria-modal")).toBe("true");
    expect(screen.getByTestId("quit-text").textContent).toBe(
      "2 agents are waiting for a decision (5 proposals pending). If you quit, they get no answer until Assent runs again.",
    );
  });

  it("says it in the singular", async () => {
    const m = new MockBackend();
    render(QuitDialog, { backend: m });
    await opened(m, 1, 1);
    expect(screen.getByTestId("quit-text").textContent).toBe(
      "1 agent is waiting for a decision (1 proposal pending). If you quit, they get no answer until Assent runs again.",
    );
  });

  it("names only the pending proposals when no agent is waiting", async () => {
    const m = new MockBackend();
    render(QuitDialog, { backend: m });
    await opened(m, 0, 3);
    expect(screen.getByTestId("quit-text").textContent).toBe("3 proposals are pending. If you quit, they stay pending until Assent runs again.");
    m.requestQuit(0, 1);
    await waitFor(() => expect(screen.getByTestId("quit-text").textContent).toBe("1 proposal is pending. If you quit, it stays pending until Assent runs again."));
  });

  it("focuses Keep running; Keep running closes it without quitting", async () => {
    const m = new MockBackend();
    render(QuitDialog, { backend: m });
    await opened(m, 2, 5);
    const keep = screen.getByRole("button", { name: "Keep running" });
    await waitFor(() => expect(document.activeElement).toBe(keep));
    await fireEvent.click(keep);
    await waitFor(() => expect(dialog()).toBeNull());
    expect(calls(m, "quit")).toHaveLength(0);
  });

  it("closes on Esc without quitting", async () => {
    const m = new MockBackend();
    render(QuitDialog, { backend: m });
    await opened(m, 2, 5);
    await fireEvent.keyDown(document.activeElement ?? document.body, { key: "Escape" });
    await waitFor(() => expect(dialog()).toBeNull());
    expect(calls(m, "quit")).toHaveLength(0);
  });

  it("keeps Tab inside the dialog", async () => {
    const m = new MockBackend();
    render(QuitDialog, { backend: m });
    await opened(m, 1, 2);
    const keep = screen.getByRole("button", { name: "Keep running" });
    const quit = screen.getByRole("button", { name: "Quit Assent" });
    await waitFor(() => expect(document.activeElement).toBe(keep));
    await fireEvent.keyDown(keep, { key: "Tab" });
    expect(document.activeElement).toBe(quit);
    await fireEvent.keyDown(quit, { key: "Tab", shiftKey: true });
    expect(document.activeElement).toBe(keep);
  });

  it("Quit Assent quits", async () => {
    const m = new MockBackend();
    render(QuitDialog, { backend: m });
    await opened(m, 2, 5);
    await fireEvent.click(screen.getByRole("button", { name: "Quit Assent" }));
    await waitFor(() => expect(calls(m, "quit")).toHaveLength(1));
    expect(m.quits).toBe(1);
  });

  it("says so when quitting fails, and stays open", async () => {
    const m = new MockBackend();
    m.quit = async () => {
      throw "the window could not be closed";
    };
    render(QuitDialog, { backend: m });
    await opened(m, 1, 1);
    await fireEvent.click(screen.getByRole("button", { name: "Quit Assent" }));
    expect((await screen.findByTestId("quit-error")).textContent).toBe("the window could not be closed");
    expect(dialog()).not.toBeNull();
  });

  it("in the app: the page behind waits, and its shortcuts do not act", async () => {
    const m = new MockBackend();
    const { container } = render(App, { backend: m });
    await waitFor(() => expect(screen.queryAllByTestId("row").length).toBeGreaterThan(0));
    await screen.findByTestId("approve");
    const pendingBefore = m.proposals.filter((p) => p.status === "pending").length;
    await opened(m, 1, pendingBefore);
    const shell = container.querySelector(".shell") as HTMLElement;
    expect(shell.inert).toBe(true);
    // "a" approves in the inbox; not while the dialog asks.
    await fireEvent.keyDown(document.activeElement ?? document.body, { key: "a" });
    await fireEvent.keyDown(document.body, { key: "a" });
    expect(calls(m, "decide")).toHaveLength(0);
    await fireEvent.click(screen.getByRole("button", { name: "Keep running" }));
    await waitFor(() => expect(dialog()).toBeNull());
    expect(shell.inert).toBe(false);
    // Closed, the shortcut works again.
    await fireEvent.keyDown(document.body, { key: "a" });
    await waitFor(() => expect(calls(m, "decide")).toHaveLength(1));
  });
});
