import { mount } from "svelte";
import App from "./App.svelte";
import { inTauri, tauriBackend } from "./api";
import "./app.css";

/** Linux, where the fonts are named by their generic families (see app.css). */
function markPlatform() {
  if (/Linux/.test(navigator.userAgent) && !/Android/.test(navigator.userAgent)) document.documentElement.classList.add("linux");
}

async function start() {
  markPlatform();
  const target = document.getElementById("app");
  if (!target) throw new Error("no #app element");
  if (!inTauri()) {
    // A plain browser (the layout checks, the screenshots): the sample inbox answers the IPC,
    // `?seed=N` adds N older proposals. Never part of the app's first load.
    const extra = Number(new URLSearchParams(location.search).get("seed") ?? "0");
    const { startPreview } = await import("./preview");
    (window as unknown as { assentPreview: unknown }).assentPreview = startPreview(extra);
  }
  mount(App, { target, props: { backend: await tauriBackend() } });
}

start();
