// The chat page: send a message and show FAA's answer as it streams (the SSE events of POST /app/chat/stream),
// with what FAA is doing in plain words ("Saving your expense…"), charts inline and a clarifying question's options
// as buttons. The newest message and its buttons stay in view above the sticky message box (scroll anchoring).
const csrf = document.querySelector('meta[name="csrf-token"]').content;
const log = document.getElementById("log");
const composer = document.getElementById("chat-form");
const input = document.getElementById("message");
const labels = composer.dataset;
const steps = JSON.parse(labels.steps || "{}");

// Follow the conversation while the member is at its end; leave them be when they scrolled up to read.
let following = true;
function atEnd() {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 48;
}
function reveal() {
  window.scrollTo({ top: document.documentElement.scrollHeight, behavior: "instant" });
}
window.addEventListener("scroll", () => {
  following = atEnd();
});
new ResizeObserver(() => {
  if (following) reveal();
}).observe(log);

function clock() {
  const now = new Date();
  const time = document.createElement("time");
  time.className = "when";
  time.dateTime = now.toISOString();
  // On the member's clock, as the history's times are (not the browser's zone, which may differ).
  const options = { hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
  try {
    time.textContent = now.toLocaleTimeString([], { ...options, timeZone: labels.timezone });
  } catch {
    time.textContent = now.toLocaleTimeString([], options);
  }
  return time;
}

function item(who, text) {
  const li = document.createElement("li");
  li.className = `msg ${who}`;
  const body = document.createElement("div");
  body.className = "text";
  body.textContent = text;
  li.append(body);
  if (who === "me") li.append(clock());
  log.append(li);
  return li;
}

function stepText(name, args) {
  if (name === "store" && args && args.amount != null) return steps.store_expense;
  return steps[name] || steps.other || labels.working;
}

function messageId() {
  return `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

function optionButtons(bubble, options) {
  if (!options || options.length === 0) return;
  const box = document.createElement("div");
  box.className = "options";
  for (const option of options) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "option";
    button.textContent = option;
    button.addEventListener("click", () => {
      box.remove();
      send(option);
    });
    box.append(button);
  }
  bubble.append(box);
}

function handle(bubble, type, data, state) {
  const text = bubble.querySelector(".text");
  if (type === "tool_use") {
    const step = document.createElement("li");
    step.className = "step running";
    step.dataset.id = data.id;
    step.dataset.tool = data.name;
    step.textContent = stepText(data.name, data.arguments);
    state.steps.append(step);
    if (state.deltas === 0) text.textContent = step.textContent;
  } else if (type === "tool_result") {
    const step = state.steps.querySelector(`li[data-id="${CSS.escape(String(data.id))}"]`);
    if (step) step.className = `step ${data.ok ? "ok" : "failed"}`;
  } else if (type === "content_delta") {
    if (state.deltas === 0) text.textContent = "";
    state.deltas += 1;
    bubble.dataset.deltas = String(state.deltas);
    text.textContent += data.text || "";
  } else if (type === "error") {
    text.textContent = data.retrying ? labels.retrying : data.message || labels.failed;
  } else if (type === "stream_end") {
    if (typeof data.reply === "string") text.textContent = data.reply;
    for (const media of data.media || []) {
      const img = document.createElement("img");
      img.className = "chart";
      img.src = media.url;
      img.alt = labels.chart;
      bubble.append(img);
    }
    optionButtons(bubble, data.options);
    bubble.classList.remove("working");
    bubble.dataset.outcome = data.outcome || "";
    bubble.append(clock());
  }
}

async function send(text) {
  following = true;
  item("me", text);
  const bubble = item("faa working", labels.working);
  const state = { deltas: 0, steps: document.createElement("ul") };
  state.steps.className = "steps";
  bubble.prepend(state.steps);
  try {
    const response = await fetch("/app/chat/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ text, client_message_id: messageId() }),
    });
    if (!response.ok) throw new Error(String(response.status));
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          block.split("\n").map((line) => [line.slice(0, line.indexOf(": ")), line.slice(line.indexOf(": ") + 2)]),
        );
        handle(bubble, fields.event, JSON.parse(fields.data || "{}"), state);
      }
    }
  } catch (error) {
    bubble.querySelector(".text").textContent = labels.failed;
  }
  bubble.classList.remove("working");
  if (following) reveal();
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!form.classList.contains("say")) return;
  event.preventDefault();
  const text = form.elements.text.value.trim();
  if (!text) return;
  if (form === composer) input.value = "";
  else form.closest(".options")?.remove();
  send(text);
});

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    composer.requestSubmit();
  }
});
reveal();
