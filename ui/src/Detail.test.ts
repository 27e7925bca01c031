import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor } from "@testing-library/svelte";
import Detail from "./Detail.svelte";
import { MockBackend } from "./mock";

describe("the detail view", () => {
  afterEach(cleanup);

  it("shows Assent's diff with the hidden character marked", async () => {
    const m = new MockBackend();
    render(Detail, { backend: m, id: "p_iqgvopaka4n7slxa5lqrbpr4cu" });
    const diff = await screen.findByTestId("diff");
    expect(diff.textContent).toContain("line two");
    expect(diff.querySelector(".mark")?.textContent).toBe("⟦U+200B⟧");
    expect(screen.getByRole("alert").textContent).toContain("ZERO WIDTH SPACE");
  });

  it("shows the agent's words as text, never as HTML", async () => {
    const m = new MockBackend();
    const p = m.proposals.find((x) => x.kind === "tool.call");
    if (!p) throw new Error("fixture");
    p.title = '<img src=x onerror="window.pwned=1">';
    p.summary = "<b>bold</b>";
    const { container } = render(Detail, { backend: m, id: p.id });
    await screen.findByText('<img src=x onerror="window.pwned=1">');
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector(".awsummary b")).toBeNull();
  });

  it("rejects with the reason the person typed", async () => {
    const m = new MockBackend();
    const id = "p_xw3z55xmqfu3hcl2bg6s3hpfxe";
    render(Detail, { backend: m, id });
    await fireEvent.click(await screen.findByTestId("reject"));
    const confirm = screen.getByTestId("confirm-reject") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);
    await fireEvent.input(screen.getByTestId("reason"), { target: { value: "not on main" } });
    await fireEvent.click(confirm);
    await waitFor(() => expect(screen.getByTestId("status-badge").textContent).toBe("rejected"));
    expect(m.calls.find((c) => c.name === "decide")?.args).toEqual([id, "reject", { reason: "not on main" }]);
  });

  it("approves an edited tool input", async () => {
    const m = new MockBackend();
    const id = "p_xw3z55xmqfu3hcl2bg6s3hpfxe";
    render(Detail, { backend: m, id });
    await fireEvent.click(await screen.findByTestId("edit"));
    const editor = document.getElementById("editor") as HTMLTextAreaElement;
    await fireEvent.input(editor, { target: { value: '{"command": "cargo test -q"}' } });
    await fireEvent.click(screen.getByText("Approve edited", { selector: ".form button" }));
    await waitFor(() => expect(screen.getByTestId("status-badge").textContent).toBe("approved"));
    expect(m.calls.find((c) => c.name === "decide")?.args[2]).toEqual({ edits: { input: { command: "cargo test -q" } } });
  });

  it("shows a preview no shape fits as it was stored, and nothing else", async () => {
    const m = new MockBackend();
    const p = m.proposals.find((x) => x.kind === "tool.call");
    if (!p) throw new Error("fixture");
    p.preview = { type: "unreadable", raw: { type: "tool.call", tool: 7 } };
    render(Detail, { backend: m, id: p.id });
    const block = await screen.findByTestId("unreadable");
    expect(block.textContent).toContain('"tool": 7');
    expect(screen.queryByTestId("diff")).toBeNull();
  });
});
