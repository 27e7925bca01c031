// The review page a phone opens through the remote listener.
import { mount } from "svelte";
import RemoteApp from "./RemoteApp.svelte";
import "./app.css";

const target = document.getElementById("app");
if (!target) throw new Error("no #app element");
mount(RemoteApp, { target });
// Installable, and where a push lands; it caches nothing of Assent's.
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
