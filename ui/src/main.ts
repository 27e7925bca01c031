import { mount } from "svelte";
import App from "./App.svelte";
import { inTauri, tauriBackend, type Backend } from "./api";
import "./app.css";

/** Linux, where the fonts are named by their generic families (see app.css). */
function markPlatform() {
  if (/Linux/.test(navigator.userAgent) && !/Android/.test(navigator.userAgent)) document.documentElement.classList.add("linux");
}

async function start() {
  markPlatform();
  const target = document.getElementById("app");
  if (!target) throw new Error("no #app element");
  let backend: Backend;
  if (inTauri()) {
    backend = await tauriBackend();
  } else {
    const seed = Number(new URLSearchParams(location.search).get("seed") ?? "0");
    // The browser preview's stand-in backend: never part of the app's first load.
    const { MockBackend } = await import("./mock");
    const mock = new MockBackend({ seed });
    (window as unknown as { assentMock: typeof mock }).assentMock = mock;
    backend = mock;
  }
  mount(App, { target, props: { backend } });
}

start();
