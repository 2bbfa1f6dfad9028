// FAA's service worker: the app shell (styles, scripts, icons and an offline page) from the cache, so the app opens
// without a network and says it is offline. Pages and data always come from the network: they are private and live.
// It also shows the push messages the server sends while no page of FAA is open, and opens the app on a click.
const CACHE = "faa-shell-v1";
const SHELL = [
  "/offline",
  "/static/app.css",
  "/static/chat.js",
  "/static/app.js",
  "/static/icon-192.png",
  "/static/icon-512.png",
  "/favicon.ico",
];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match("/offline")));
    return;
  }
  if (SHELL.includes(new URL(request.url).pathname)) {
    // The network first (a new version is picked up at once), the cached copy when offline.
    event.respondWith(
      fetch(request)
        .then((response) => {
          const copy = response.clone();
          if (response.ok) caches.open(CACHE).then((cache) => cache.put(request, copy));
          return response;
        })
        .catch(() => caches.match(request)),
    );
  }
});

// A push message: {title, body, tag, url}, decrypted by the browser. The tag is the one an open page's notification
// for the same message has, so a message shown twice replaces itself rather than adding a second notification.
self.addEventListener("push", (event) => {
  let note = {};
  try {
    note = event.data ? event.data.json() : {};
  } catch (error) {
    note = {};
  }
  event.waitUntil(
    self.registration.showNotification(note.title || "FAA", {
      body: note.body || "",
      tag: note.tag,
      icon: "/static/icon-192.png",
      data: { url: note.url || "/" },
    }),
  );
});

// The push service replaced this browser's subscription (it expired, or the browser renewed it): unless the server
// hears of the new one, pushes stop arriving. Subscribe again with the household's key — subscribe() hands back the
// browser's new subscription if it made one — and post it in place of the old one. The server keeps it for the
// member who turned push on, who need not be the one signed in now: members may share a browser.
// Signed out, push off on the server, or no old subscription to name, nothing is done: the Reminders page turns it
// on again.
self.addEventListener("pushsubscriptionchange", (event) => {
  event.waitUntil(resubscribe(event.oldSubscription));
});

async function resubscribe(old) {
  if (!old) return;
  const state = await fetch("/app/push", { credentials: "same-origin" });
  if (!state.ok) return;
  const { key, csrf } = await state.json();
  const options = { userVisibleOnly: true, applicationServerKey: key };
  const subscription = await self.registration.pushManager.subscribe(options);
  await fetch("/app/push", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify({ ...subscription.toJSON(), replaces: old.endpoint }),
  });
}

// A click opens the app where the message belongs: a window of FAA already open is brought forward, else a new one.
self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL(event.notification.data?.url || "/", self.location.origin);
  const url = target.origin === self.location.origin ? target.href : self.location.origin + "/";
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
      const open = windows.find((client) => new URL(client.url).origin === self.location.origin);
      if (!open) return self.clients.openWindow(url);
      // navigate() works only on a page this worker controls; any other is brought forward as it is.
      return open
        .navigate(url)
        .catch(() => null)
        .then((client) => (client || open).focus());
    }),
  );
});
