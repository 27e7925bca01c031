import { mount } from "svelte";
import App from "./App.svelte";
import { inTauri, tauriBackend, type Backend } from "./api";
import { MockBackend } from "./mock";
import "./app.css";

async function start() {
  const target = document.getElementById("app");
  if (!target) throw new Error("no #app element");
  let backend: Backend;
  if (inTauri()) {
    backend = await tauriBackend();
  } else {
    const seed = Number(new URLSearchParams(location.search).get("seed") ?? "0");
    const mock = new MockBackend({ seed });
    (window as unknown as { assentMock: MockBackend }).assentMock = mock;
    backend = mock;
  }
  mount(App, { target, props: { backend } });
}

start();
