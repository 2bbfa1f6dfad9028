// Every page: register the service worker (installable app, offline page); ask before a form marked
// data-confirm is sent (revoking calendar addresses, cancelling an event).
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {});
}
document.addEventListener("submit", (event) => {
  const question = event.target.dataset?.confirm;
  if (question && !window.confirm(question)) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }
}, true);

// Live notifications while a page is open (GET /app/events): a reminder or digest shows at once — in the chat as
// FAA's message, elsewhere as a notice — and as a system notification when the member turned those on and the page
// is not in view. EventSource reconnects by itself and sends the last id back, so nothing delivered meanwhile is
// missed; one seen already (in another page of this tab's session) is not shown twice.
const live = document.getElementById("live");
if (live && "EventSource" in window) {
  const seen = new Set(JSON.parse(sessionStorage.getItem("faa-seen") || "[]"));
  const source = new EventSource("/app/events");
  // Open: the server follows this member's notifications from now on (scripts and tests may wait for it). Opened
  // again after a break, what the page shows may have changed meanwhile.
  let opened = false;
  source.addEventListener("open", () => {
    document.documentElement.dataset.live = "open";
    if (opened) document.dispatchEvent(new CustomEvent("faa:changed", { detail: { what: "everything" } }));
    opened = true;
  });
  // Rows this page may show changed elsewhere (a reminder fired, or was set or moved in a chat or by another member).
  source.addEventListener("changed", (event) => {
    document.dispatchEvent(new CustomEvent("faa:changed", { detail: JSON.parse(event.data) }));
  });
  source.addEventListener("error", () => delete document.documentElement.dataset.live);
  source.addEventListener("notification", (event) => {
    const note = JSON.parse(event.data);
    if (seen.has(note.id)) return;
    seen.add(note.id);
    sessionStorage.setItem("faa-seen", JSON.stringify([...seen].slice(-200)));
    const shown = new CustomEvent("faa:notification", { detail: note, cancelable: true });
    if (document.dispatchEvent(shown)) notice(note);
    if ("Notification" in window && Notification.permission === "granted" && document.visibilityState !== "visible") {
      const system = new Notification("FAA", { body: note.text, tag: `faa-${note.id}` });
      system.addEventListener("click", () => window.focus());
    }
  });

  function notice(note) {
    let region = document.getElementById("notices");
    if (!region) {
      region = document.createElement("div");
      region.id = "notices";
      region.className = "notices";
      region.setAttribute("role", "status");
      region.setAttribute("aria-live", "polite");
      document.body.append(region);
    }
    const box = document.createElement("div");
    box.className = "notice live-notice";
    box.dataset.id = note.id;
    const text = document.createElement("span");
    text.textContent = note.text;
    const open = document.createElement("a");
    open.href = "/reminders";
    open.textContent = live.dataset.open;
    const close = document.createElement("button");
    close.type = "button";
    close.className = "link";
    close.textContent = live.dataset.close;
    close.addEventListener("click", () => box.remove());
    box.append(text, open, close);
    region.append(box);
  }
}

// The reminders page reads its list and feed again when reminders change elsewhere, without a reload; while the
// member is working in the list (a snooze choice open), the update waits until they leave it.
const reminderList = document.getElementById("reminders");
if (reminderList) {
  let asked = 0;
  let waiting = false;
  const refresh = async () => {
    if (reminderList.contains(document.activeElement)) {
      waiting = true;
      return;
    }
    waiting = false;
    const mine = ++asked;
    const response = await fetch("/reminders", { headers: { Accept: "text/html" } }).catch(() => null);
    if (!response || !response.ok || mine !== asked) return;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    if (mine !== asked) return; // a newer read is on its way
    for (const id of ["reminders", "feed"]) {
      const now = fresh.getElementById(id);
      if (now) document.getElementById(id).replaceChildren(...now.childNodes);
    }
    reminderList.dataset.updated = String(Number(reminderList.dataset.updated || 0) + 1);
  };
  document.addEventListener("faa:changed", (event) => {
    if (["reminders", "everything"].includes(event.detail.what)) refresh();
  });
  reminderList.addEventListener("focusout", () => setTimeout(() => waiting && refresh(), 0));
}

// The reminders page's switch for system notifications on this device.
const notify = document.getElementById("notify");
if (notify && "Notification" in window) {
  const button = document.getElementById("notify-on");
  const state = document.getElementById("notify-state");
  const show = () => {
    button.hidden = Notification.permission !== "default";
    state.textContent = { granted: notify.dataset.on, denied: notify.dataset.blocked }[Notification.permission] || "";
  };
  notify.hidden = false;
  show();
  button.addEventListener("click", () => Notification.requestPermission().then(show));
}

// The reminders page's switch for push notifications on this device: while no page of FAA is open, the server
// sends reminders, summaries and replies through the browser's push service, and the service worker shows them.
// Whether it is on is the server's word: a browser shared by two members notifies the one who turned it on last.
const pushCard = document.getElementById("push");
if (pushCard && "serviceWorker" in navigator && "PushManager" in window && "Notification" in window) {
  const toggle = document.getElementById("push-toggle");
  const state = document.getElementById("push-state");
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const post = (path, body) =>
    fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    }).then((response) => {
      if (!response.ok) throw new Error(`${path}: ${response.status}`);
      return response.json();
    });
  const key = Uint8Array.from(atob(pushCard.dataset.key.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const sameKey = (subscription) => {
    const used = subscription.options && subscription.options.applicationServerKey;
    return !used || new Uint8Array(used).every((byte, i) => byte === key[i]);
  };
  let on = false;
  const show = (message) => {
    toggle.textContent = on ? pushCard.dataset.turnOff : pushCard.dataset.turnOn;
    toggle.setAttribute("aria-pressed", String(on));
    toggle.disabled = false;
    state.textContent = message || (on ? pushCard.dataset.on : pushCard.dataset.off);
    pushCard.dataset.state = on ? "on" : "off";
  };
  navigator.serviceWorker.ready.then(async (registration) => {
    pushCard.hidden = false;
    const current = await registration.pushManager.getSubscription();
    // Check in: the browser's keys kept in step, and whether push is on here for this member.
    if (current) on = await post("/app/push", { ...current.toJSON(), renew: true }).then((r) => r.push, () => false);
    show();
    toggle.addEventListener("click", async () => {
      toggle.disabled = true;
      let subscription = await registration.pushManager.getSubscription();
      try {
        if (on) {
          await post("/app/push/remove", { endpoint: subscription ? subscription.endpoint : "" });
          if (subscription) await subscription.unsubscribe();
          on = false;
          show();
          return;
        }
        if ((await Notification.requestPermission()) !== "granted") {
          show(pushCard.dataset.blocked);
          return;
        }
        if (subscription && !sameKey(subscription)) {
          await subscription.unsubscribe(); // made for another household's key: this browser moves to this member
          subscription = null;
        }
        subscription =
          subscription || (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }));
        on = (await post("/app/push", subscription.toJSON())).push;
        show();
      } catch (error) {
        show(pushCard.dataset.failed);
      }
    });
  });
}
