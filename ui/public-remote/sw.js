// Assent's review page, installed as an app. The service worker keeps nothing of Assent's data
// (every proposal is fetched live, behind the passkey); it shows the push that says how many
// proposals wait, and nothing else, and opens the page when it is tapped.

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));

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
