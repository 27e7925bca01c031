import { afterEach, describe, expect, it, vi } from "vitest";
import { Remote, RemoteError, creationOptions, fromB64url, remoteBackend, requestOptions, toB64url, type Authenticator } from "./remote";

const bytes = (...b: number[]) => new Uint8Array(b).buffer;

describe("WebAuthn's JSON forms", () => {
  it("base64url round-trips every byte value, without padding", () => {
    const all = new Uint8Array(256).map((_, i) => i);
    const s = toB64url(all.buffer)!;
    expect(s).not.toMatch(/[+/=]/);
    expect(new Uint8Array(fromB64url(s))).toEqual(all);
    expect(toB64url(null)).toBeNull();
  });

  it("decodes the bytes of the server's options and nothing else", () => {
    const c = creationOptions({ publicKey: { challenge: "AQID", user: { id: "BAU", name: "pixel" }, rp: { id: "phone.example" } } });
    const pk = c.publicKey!;
    expect(new Uint8Array(pk.challenge as ArrayBuffer)).toEqual(new Uint8Array([1, 2, 3]));
    expect(new Uint8Array(pk.user.id as ArrayBuffer)).toEqual(new Uint8Array([4, 5]));
    expect(pk.rp.id).toBe("phone.example");
    const r = requestOptions({ publicKey: { challenge: "AQID", allowCredentials: [{ id: "Bw", type: "public-key" }] } });
    expect(new Uint8Array(r.publicKey!.allowCredentials![0].id as ArrayBuffer)).toEqual(new Uint8Array([7]));
  });
});

/** A passkey standing in for the phone's: it signs whatever challenge it is given. */
function fakeAuthenticator(signed: ArrayBuffer[]): Authenticator {
  const credential = (challenge: ArrayBuffer) =>
    ({
      id: "Y3JlZA",
      rawId: bytes(99, 114, 101, 100),
      type: "public-key",
      response: { clientDataJSON: challenge, authenticatorData: bytes(1), signature: bytes(2), userHandle: null },
      getClientExtensionResults: () => ({}),
    }) as unknown as PublicKeyCredential;
  return {
    create: async (o) => credential(o.publicKey!.challenge as ArrayBuffer),
    get: async (o) => {
      signed.push(o.publicKey!.challenge as ArrayBuffer);
      return credential(o.publicKey!.challenge as ArrayBuffer);
    },
  };
}

describe("the phone's backend", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("signs each decision over the payload hash it showed, and sends the same decision back", async () => {
    const calls: { method: string; url: string; body: any }[] = [];
    const proposal = { id: "p_1", status: "pending", payload_sha256: "ab".repeat(32) };
    vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
      const body = init.body ? JSON.parse(init.body as string) : undefined;
      calls.push({ method: init.method!, url, body });
      const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status });
      if (url === "/api/proposals?limit=10") return json({ items: [proposal], next_cursor: null });
      if (url === "/api/decisions/options") return json({ nonce: "n1", options: { publicKey: { challenge: "AQID", allowCredentials: [] } } });
      if (url === "/api/decisions") return json({ results: [{ id: "p_1", result: "decided", status: "rejected" }], decided: 1, approved: 0, rejected: 1, refined: 0, skipped: 0, failed: 0 });
      if (url === "/api/proposals/p_1") return json({ proposal: { ...proposal, status: "rejected" }, audit: [] });
      return json({ error: { code: "not_found", message: "no" } }, 404);
    });
    const signed: ArrayBuffer[] = [];
    const backend = remoteBackend(new Remote(fakeAuthenticator(signed)));
    await backend.list({ limit: 10 });
    const done = await backend.decide("p_1", "reject", { reason: "no" });
    expect(done.status).toBe("rejected");
    const ask = calls.find((c) => c.url === "/api/decisions/options")!.body;
    expect(ask).toEqual({ items: [{ id: "p_1", payload_sha256: "ab".repeat(32) }], outcome: "reject", reason: "no" });
    const answer = calls.find((c) => c.url === "/api/decisions")!.body;
    expect(answer).toMatchObject({ ...ask, nonce: "n1" });
    expect(answer.credential.response.signature).toBe("Ag");
    expect(new Uint8Array(signed[0])).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("searches and filters on the server, as the desktop does", async () => {
    const urls: string[] = [];
    vi.stubGlobal("fetch", async (url: string) => {
      urls.push(url);
      return new Response(JSON.stringify({ items: [], next_cursor: null }), { status: 200 });
    });
    const backend = remoteBackend(new Remote(fakeAuthenticator([])));
    await backend.list({ status: "pending", kind: "tool.call", agent: "claude", text: " terraform ", limit: 50 });
    await backend.list({ text: "  " });
    expect(urls).toEqual(["/api/proposals?status=pending&kind=tool.call&agent=claude&q=terraform&limit=50", "/api/proposals?"]);
  });

  it("reports a refusal with its code, and never as a decision", async () => {
    vi.stubGlobal("fetch", async () => new Response(JSON.stringify({ error: { code: "assertion_mismatch", message: "the passkey signed something other" } }), { status: 403 }));
    const backend = remoteBackend(new Remote(fakeAuthenticator([])));
    const e = await backend.decide("p_1", "approve").catch((x) => x);
    expect(e).toBeInstanceOf(RemoteError);
    expect((e as RemoteError).code).toBe("assertion_mismatch");
  });

  it("leaves administration to the desktop", async () => {
    const backend = remoteBackend(new Remote(fakeAuthenticator([])));
    expect(backend.remote).toBe(true);
    await expect(backend.rules()).rejects.toMatchObject({ code: "not_on_phone" });
    await expect(backend.addAgent("x")).rejects.toMatchObject({ code: "not_on_phone" });
  });
});

describe("the event stream", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("reloads each time its stream opens, and when it ends for good", async () => {
    class FakeSource {
      static CONNECTING = 0;
      static OPEN = 1;
      static CLOSED = 2;
      static last: FakeSource;
      readyState = 1;
      listeners: Record<string, (e: MessageEvent) => void> = {};
      onerror: (() => void) | null = null;
      onopen: (() => void) | null = null;
      constructor(public url: string) {
        FakeSource.last = this;
      }
      addEventListener(name: string, f: (e: MessageEvent) => void) {
        this.listeners[name] = f;
      }
      close() {}
    }
    vi.stubGlobal("EventSource", FakeSource);
    const seen: string[] = [];
    const backend = remoteBackend(new Remote(fakeAuthenticator([])));
    await backend.onChange((c) => seen.push(c.type));
    const es = FakeSource.last;
    // Opened after the list was loaded: what was filed in between is reloaded.
    es.onopen!();
    expect(seen).toEqual(["lagged"]);
    es.listeners["proposal.created"]({ data: JSON.stringify({ type: "proposal.created" }) } as MessageEvent);
    expect(seen).toEqual(["lagged", "proposal.created"]);
    // Cut (the browser takes it up again by itself), then back: what was missed is reloaded.
    es.readyState = FakeSource.CONNECTING;
    es.onerror!();
    expect(seen).toEqual(["lagged", "proposal.created"]);
    es.readyState = FakeSource.OPEN;
    es.onopen!();
    expect(seen).toEqual(["lagged", "proposal.created", "lagged"]);
    // Ended for good (the session is over): reloaded at once.
    es.readyState = FakeSource.CLOSED;
    es.onerror!();
    expect(seen).toEqual(["lagged", "proposal.created", "lagged", "lagged"]);
  });
});
