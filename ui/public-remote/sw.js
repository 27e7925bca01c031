// Assent's review page, installed as an app. The service worker keeps nothing of Assent's data
// (every proposal is fetched live, behind the passkey); it shows the push that says how many
// proposals wait, and nothing else, and opens the page when it is tapped. When the page itself
// cannot be reached (the phone offline, the computer asleep, Assent or the tunnel stopped), it
// says so in a page of its own instead of the browser's error.

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));

const OFFLINE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Assent: not reachable</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; padding: 32px 20px; color: #1c1e21; background: #fff; }
  @media (prefers-color-scheme: dark) { body { color: #e4e6eb; background: #18191a; } a { color: #7ab4ff; } }
  h1 { font-size: 20px; margin: 0 0 12px; } ul { padding-left: 20px; }
  a.retry { display: inline-block; min-height: 44px; line-height: 44px; padding: 0 20px; border-radius: 10px; background: #1a7f37; color: #fff; text-decoration: none; }
</style></head>
<body data-testid="offline"><h1>Assent cannot be reached</h1>
<p>Nothing can be read or decided from here until it is back. Likely, one of these:</p>
<ul><li>this phone is offline;</li><li>the computer running Assent is asleep or off;</li><li>Assent, or the tunnel to it, is stopped.</li></ul>
<p><a class="retry" href="/">Try again</a></p></body></html>`;

// A page load that fails gets the page above; everything else (the API, the page's files) goes
// to the network as it is, and nothing is cached.
self.addEventListener("fetch", (e) => {
  if (e.request.mode !== "navigate") return;
  e.respondWith(fetch(e.request).catch(() => new Response(OFFLINE, { headers: { "content-type": "text/html; charset=utf-8" } })));
});

self.addEventListener("push", (e) => {
  let n = 0;
  try {
    n = Number(e.data?.json()?.pending ?? 0);
  } catch {
    n = 0;
  }
  const body = n === 1 ? "1 proposal waits for you" : n > 1 ? `${n} proposals wait for you` : "Your agents wait for you";
  e.waitUntil(self.registration.showNotification("Assent", { body, tag: "assent-pending", renotify: true, icon: "/icon-192.png" }));
});

self.addEventListener("notificationclick", (e) => {
  e.notification.close();
  e.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((open) => {
      const mine = open.find((c) => new URL(c.url).origin === self.location.origin);
      return mine ? mine.focus() : self.clients.openWindow("/");
    }),
  );
});
