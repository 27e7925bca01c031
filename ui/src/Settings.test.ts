import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor } from "@testing-library/svelte";
import Settings from "./Settings.svelte";
import { MockBackend } from "./mock";

const box = () => screen.getByTestId("autostart") as HTMLInputElement;
const calls = (m: MockBackend, name: string) => m.calls.filter((c) => c.name === name);

describe("the Settings page", () => {
  afterEach(cleanup);

  it("starts Assent at login only once asked, and stops again", async () => {
    const m = new MockBackend();
    render(Settings, { backend: m });
    expect(screen.getByText("Started at login, Assent opens in the tray; agents can propose while the window is closed.")).toBeTruthy();
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(false);
    expect(box().labels?.[0].textContent?.trim()).toBe("Start Assent when I log in");

    await fireEvent.click(box());
    await waitFor(() => expect(m.autostartOn).toBe(true));
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(true);
    expect(calls(m, "setAutostart").map((c) => c.args)).toEqual([[true]]);

    await fireEvent.click(box());
    await waitFor(() => expect(m.autostartOn).toBe(false));
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(false);
    expect(calls(m, "setAutostart").map((c) => c.args)).toEqual([[true], [false]]);
    expect(screen.queryByTestId("autostart-error")).toBeNull();
  });

  it("shows the state the system reports", async () => {
    const m = new MockBackend();
    m.autostartOn = true;
    render(Settings, { backend: m });
    await waitFor(() => expect(box().checked).toBe(true));
  });

  it("puts the box back and says why when the system refuses (a string error)", async () => {
    const m = new MockBackend();
    m.autostartError = "the login items could not be written";
    render(Settings, { backend: m });
    await waitFor(() => expect(box().disabled).toBe(false));
    await fireEvent.click(box());
    const err = await screen.findByTestId("autostart-error");
    expect(err.textContent).toBe("the login items could not be written");
    expect(err.getAttribute("role")).toBe("alert");
    expect(box().getAttribute("aria-describedby")).toContain("autostart-error");
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(false);
    expect(m.autostartOn).toBe(false);

    // The next attempt clears the error.
    await fireEvent.click(box());
    await waitFor(() => expect(m.autostartOn).toBe(true));
    await waitFor(() => expect(screen.queryByTestId("autostart-error")).toBeNull());
    expect(box().checked).toBe(true);
  });

  it("puts the box back when turning it off fails (an error object)", async () => {
    const m = new MockBackend();
    m.autostartOn = true;
    render(Settings, { backend: m });
    await waitFor(() => expect(box().checked).toBe(true));
    m.autostartError = { code: "autostart", message: "permission denied" };
    await fireEvent.click(box());
    expect((await screen.findByTestId("autostart-error")).textContent).toBe("permission denied");
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(true);
    expect(m.autostartOn).toBe(true);
  });

  it("says when the state cannot be read", async () => {
    const m = new MockBackend();
    m.autostart = async () => {
      throw { code: "autostart", message: "no session bus" };
    };
    render(Settings, { backend: m });
    expect((await screen.findByTestId("autostart-error")).textContent).toBe("Could not read whether Assent starts at login: no session bus");
    expect(box().checked).toBe(false);
  });

  it("shows the version with its commit, as assent --version does, in About", async () => {
    const m = new MockBackend();
    render(Settings, { backend: m });
    await waitFor(() => expect(screen.getByTestId("version").textContent).toBe("0.1.0 (commit 3f2a9c1)"));
    const about = screen.getByRole("region", { name: "About" });
    expect(about.textContent).toContain("Assent");
    expect(about.textContent).toContain("Version 0.1.0 (commit 3f2a9c1)");
    expect(about.textContent).toContain("An approval inbox for AI agents. Nothing is written without your decision.");
  });

  it("shows an unknown commit as the CLI does", async () => {
    const m = new MockBackend();
    const info = await m.info();
    m.info = async () => ({ ...info, version: "0.2.0", commit: "unknown" });
    render(Settings, { backend: m });
    await waitFor(() => expect(screen.getByTestId("version").textContent).toBe("0.2.0 (commit unknown)"));
  });

  it("turns answering from a phone on, pairs with a QR code, revokes, and turns it off", async () => {
    const m = new MockBackend();
    render(Settings, { backend: m });
    const input = (await screen.findByTestId("remote-origin-input")) as HTMLInputElement;
    await fireEvent.input(input, { target: { value: "http://desk.example" } });
    await fireEvent.click(screen.getByTestId("remote-on"));
    await waitFor(() => expect(screen.getByTestId("remote-error").textContent).toContain("https://HOST"));
    await fireEvent.input(input, { target: { value: "https://desk.example.ts.net" } });
    await fireEvent.click(screen.getByTestId("remote-on"));
    await waitFor(() => expect(screen.getByTestId("remote-origin").textContent).toBe("https://desk.example.ts.net"));
    expect(screen.getByTestId("remote-address").textContent).toBe("127.0.0.1:4518");
    expect(calls(m, "remoteEnable").at(-1)?.args).toEqual(["https://desk.example.ts.net", 60]);

    await fireEvent.input(screen.getByTestId("pair-name"), { target: { value: "Anna's Pixel" } });
    await fireEvent.click(screen.getByTestId("pair"));
    await waitFor(() => expect(screen.getByTestId("pair-link").textContent).toContain("#pair="));
    expect(screen.getByTestId("pair-link").textContent).toContain("name=Anna's%20Pixel");
    expect(screen.getByTestId("pair-qr").querySelectorAll("rect").length).toBeGreaterThan(100);

    m.devices.push({ name: "pixel", added_at: new Date().toISOString() });
    await fireEvent.change(screen.getByTestId("push-after"), { target: { value: "0" } });
    await waitFor(() => expect(screen.getByTestId("devices").textContent).toContain("pixel"));
    await fireEvent.click(screen.getByTestId("revoke-device"));
    await waitFor(() => expect(screen.getByTestId("devices").textContent).toContain("revoked"));
    expect(m.devices[0].revoked_at).toBeTruthy();

    await fireEvent.click(screen.getByTestId("remote-off"));
    await waitFor(() => expect(screen.getByTestId("remote-on")).toBeTruthy());
  });
});
