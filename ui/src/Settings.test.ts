import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor } from "@testing-library/svelte";
import Settings from "./Settings.svelte";
import { tauriBackend, type RemoteStatus } from "./api";
import { answer, type Handler } from "./ipc-mock";
import * as sample from "./sample";
import type { DeviceInfo } from "./bindings/DeviceInfo";

const box = () => screen.getByTestId("autostart") as HTMLInputElement;

/** The Settings page's answers: Assent not started at login, the remote listener off. */
function settings(handlers: Record<string, Handler> = {}) {
  return answer({
    app_info: () => sample.INFO,
    get_autostart: () => false,
    set_autostart: ({ enabled }) => enabled,
    remote_status: () => ({ enabled: false, devices: 0, subscribed: 0, push_after: 60 }),
    remote_devices: () => [],
    ...handlers,
  });
}

describe("the Settings page", () => {
  afterEach(cleanup);

  it("starts Assent at login only once asked, and stops again", async () => {
    const ipc = settings();
    render(Settings, { backend: await tauriBackend() });
    expect(screen.getByText("Started at login, Assent opens in the tray; agents can propose while the window is closed.")).toBeTruthy();
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(false);
    expect(box().labels?.[0].textContent?.trim()).toBe("Start Assent when I log in");
    expect(ipc.args("set_autostart")).toEqual([]);

    await fireEvent.click(box());
    await waitFor(() => expect(ipc.args("set_autostart")).toEqual([{ enabled: true }]));
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(true);

    await fireEvent.click(box());
    await waitFor(() => expect(ipc.args("set_autostart")).toEqual([{ enabled: true }, { enabled: false }]));
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(false);
    expect(screen.queryByTestId("autostart-error")).toBeNull();
  });

  it("shows the state the system reports", async () => {
    settings({ get_autostart: () => true });
    render(Settings, { backend: await tauriBackend() });
    await waitFor(() => expect(box().checked).toBe(true));
  });

  it("puts the box back and says why when the system refuses (a string error)", async () => {
    let asked = 0;
    const ipc = settings({
      set_autostart: ({ enabled }) => {
        if (++asked === 1) throw "the login items could not be written";
        return enabled;
      },
    });
    render(Settings, { backend: await tauriBackend() });
    await waitFor(() => expect(box().disabled).toBe(false));
    await fireEvent.click(box());
    const err = await screen.findByTestId("autostart-error");
    expect(err.textContent).toBe("the login items could not be written");
    expect(err.getAttribute("role")).toBe("alert");
    expect(box().getAttribute("aria-describedby")).toContain("autostart-error");
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(false);

    // The next attempt clears the error.
    await fireEvent.click(box());
    await waitFor(() => expect(screen.queryByTestId("autostart-error")).toBeNull());
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(true);
    expect(ipc.args("set_autostart")).toEqual([{ enabled: true }, { enabled: true }]);
  });

  it("puts the box back when turning it off fails (an error object)", async () => {
    const ipc = settings({
      get_autostart: () => true,
      set_autostart: () => {
        throw { code: "autostart", message: "permission denied" };
      },
    });
    render(Settings, { backend: await tauriBackend() });
    await waitFor(() => expect(box().checked).toBe(true));
    await fireEvent.click(box());
    expect((await screen.findByTestId("autostart-error")).textContent).toBe("permission denied");
    await waitFor(() => expect(box().disabled).toBe(false));
    expect(box().checked).toBe(true);
    expect(ipc.args("set_autostart")).toEqual([{ enabled: false }]);
  });

  it("says when the state cannot be read", async () => {
    settings({
      get_autostart: () => {
        throw { code: "autostart", message: "no session bus" };
      },
    });
    render(Settings, { backend: await tauriBackend() });
    expect((await screen.findByTestId("autostart-error")).textContent).toBe("Could not read whether Assent starts at login: no session bus");
    expect(box().checked).toBe(false);
  });

  it("shows the version with its commit, as assent --version does, in About", async () => {
    settings({ app_info: () => ({ ...sample.INFO, version: "0.1.0", commit: "3f2a9c1" }) });
    render(Settings, { backend: await tauriBackend() });
    await waitFor(() => expect(screen.getByTestId("version").textContent).toBe("0.1.0 (commit 3f2a9c1)"));
    const about = screen.getByRole("region", { name: "About" });
    expect(about.textContent).toContain("Assent");
    expect(about.textContent).toContain("Version 0.1.0 (commit 3f2a9c1)");
    expect(about.textContent).toContain("An approval inbox for AI agents. Nothing is written without your decision.");
  });

  it("shows an unknown commit as the CLI does", async () => {
    settings({ app_info: () => ({ ...sample.INFO, version: "0.2.0", commit: "unknown" }) });
    render(Settings, { backend: await tauriBackend() });
    await waitFor(() => expect(screen.getByTestId("version").textContent).toBe("0.2.0 (commit unknown)"));
  });

  it("turns answering from a phone on, pairs with a QR code, revokes, and turns it off", async () => {
    // The remote listener as the backend keeps it; each command below says what it does to it.
    let status: RemoteStatus = { enabled: false, devices: 0, subscribed: 0, push_after: 60 };
    const devices: DeviceInfo[] = [];
    const ipc = settings({
      remote_status: () => ({ ...status, devices: devices.filter((d) => !d.revoked_at).length }),
      remote_devices: () => devices,
      remote_enable: ({ origin, pushAfter }) => {
        if (origin === "http://desk.example") throw { code: "invalid_origin", message: "the remote origin must be https://HOST[:PORT] with no path: http://desk.example" };
        status = { ...status, enabled: true, origin: (origin as string | null) ?? status.origin, address: "127.0.0.1:4518", push_after: (pushAfter as number | null) ?? status.push_after };
        return status;
      },
      remote_pair: ({ name }) => ({
        link: `https://desk.example.ts.net/#pair=${"7f".repeat(32)}&name=${encodeURIComponent(name as string)}`,
        expires_at: new Date(Date.now() + 5 * 60_000).toISOString(),
        // A stand-in pattern of a real code's size (the host draws the real one).
        qr: { width: 21, modules: "10".repeat(220) + "1" },
      }),
      remote_revoke: ({ name }) => {
        const d = devices.find((x) => x.name === name);
        if (d) d.revoked_at = new Date().toISOString();
        return null;
      },
      remote_disable: () => (status = { ...status, enabled: false, address: undefined }),
    });
    render(Settings, { backend: await tauriBackend() });
    const input = (await screen.findByTestId("remote-origin-input")) as HTMLInputElement;
    await fireEvent.input(input, { target: { value: "http://desk.example" } });
    await fireEvent.click(screen.getByTestId("remote-on"));
    await waitFor(() => expect(screen.getByTestId("remote-error").textContent).toContain("https://HOST"));
    await fireEvent.input(input, { target: { value: "https://desk.example.ts.net" } });
    await fireEvent.click(screen.getByTestId("remote-on"));
    await waitFor(() => expect(screen.getByTestId("remote-origin").textContent).toBe("https://desk.example.ts.net"));
    expect(screen.getByTestId("remote-address").textContent).toBe("127.0.0.1:4518");
    expect(ipc.args("remote_enable").at(-1)).toEqual({ origin: "https://desk.example.ts.net", port: null, pushAfter: 60 });

    await fireEvent.input(screen.getByTestId("pair-name"), { target: { value: "Anna's Pixel" } });
    await fireEvent.click(screen.getByTestId("pair"));
    await waitFor(() => expect(screen.getByTestId("pair-link").textContent).toContain("#pair="));
    expect(ipc.args("remote_pair")).toEqual([{ name: "Anna's Pixel" }]);
    expect(screen.getByTestId("pair-link").textContent).toContain("name=Anna's%20Pixel");
    expect(screen.getByTestId("pair-qr").querySelectorAll("rect").length).toBeGreaterThan(100);

    // A phone pairs; the next refresh (a new push delay) lists it.
    devices.push({ name: "pixel", added_at: new Date().toISOString() });
    await fireEvent.change(screen.getByTestId("push-after"), { target: { value: "0" } });
    await waitFor(() => expect(screen.getByTestId("devices").textContent).toContain("pixel"));
    expect(ipc.args("remote_enable").at(-1)).toEqual({ origin: null, port: null, pushAfter: 0 });
    await fireEvent.click(screen.getByTestId("revoke-device"));
    await waitFor(() => expect(screen.getByTestId("devices").textContent).toContain("revoked"));
    expect(ipc.args("remote_revoke")).toEqual([{ name: "pixel" }]);

    await fireEvent.click(screen.getByTestId("remote-off"));
    await waitFor(() => expect(screen.getByTestId("remote-on")).toBeTruthy());
    expect(ipc.args("remote_disable")).toHaveLength(1);
  });
});
