// The chat page: send a message and show FAA's answer as it streams (the SSE events of POST /app/chat/stream),
// with what FAA is doing in plain words ("Saving your expense…"), charts inline and a clarifying question's options
// as buttons. The newest message and its buttons stay in view above the sticky message box (scroll anchoring).
// Photos, receipts, voice notes (chosen or recorded here) and files go with a message as multipart/form-data; the
// server reads them as it reads a Telegram photo or an emailed receipt.
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

function preview(file) {
  const url = URL.createObjectURL(file);
  if (file.type.startsWith("image/")) {
    const img = document.createElement("img");
    img.className = "photo";
    img.src = url;
    img.alt = file.name || labels.photo;
    return img;
  }
  if (file.type.startsWith("audio/")) {
    const audio = document.createElement("audio");
    audio.className = "voice";
    audio.controls = true;
    audio.src = url;
    audio.setAttribute("aria-label", labels.voice);
    return audio;
  }
  const name = document.createElement("span");
  name.className = "file";
  name.textContent = file.name;
  return name;
}

function item(who, text, files = []) {
  const li = document.createElement("li");
  li.className = `msg ${who}`;
  for (const file of files) li.append(preview(file));
  const body = document.createElement("div");
  body.className = "text";
  body.textContent = text;
  if (text || files.length === 0) li.append(body);
  if (who === "me") li.append(clock());
  log.append(li);
  return li;
}

// The files that go with the next message, shown above the message box, each with a button to take it out.
const attach = document.getElementById("attach");
const chosenList = document.getElementById("chosen");
const record = document.getElementById("record");
let chosen = [];
const note = document.createElement("p");
note.className = "error";
note.setAttribute("role", "alert");
note.hidden = true;
composer.prepend(note);

function say(text) {
  note.textContent = text || "";
  note.hidden = !text;
}

function showChosen() {
  chosenList.replaceChildren();
  chosen.forEach((file, index) => {
    const li = document.createElement("li");
    if (file.type.startsWith("image/")) {
      const thumb = preview(file);
      thumb.alt = "";
      li.append(thumb);
    }
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = file.name;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "×";
    remove.setAttribute("aria-label", labels.remove.replace("{name}", file.name));
    remove.addEventListener("click", () => {
      chosen.splice(index, 1);
      showChosen();
      input.focus();
    });
    li.append(name, remove);
    chosenList.append(li);
  });
  chosenList.hidden = chosen.length === 0;
  input.required = chosen.length === 0; // files alone are a message
}

document.getElementById("attach-label").hidden = false;
attach.addEventListener("change", () => {
  chosen.push(...attach.files);
  attach.value = "";
  say("");
  showChosen();
});

// A voice note recorded here: the microphone while the button is pressed, then a file like a chosen one.
let recorder = null;
function recording(on) {
  record.setAttribute("aria-pressed", String(on));
  record.title = on ? record.dataset.stop : record.dataset.record;
  record.querySelector(".visually-hidden").textContent = record.title;
  input.placeholder = on ? labels.recording : input.dataset.placeholder;
}
async function startRecording() {
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (error) {
    say(labels.noMicrophone.replace("{reason}", error.message || error.name));
    return;
  }
  const type = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/mp4"].find((t) =>
    MediaRecorder.isTypeSupported(t),
  );
  const chunks = [];
  recorder = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
  recorder.addEventListener("dataavailable", (event) => {
    if (event.data.size > 0) chunks.push(event.data);
  });
  recorder.addEventListener("stop", () => {
    for (const track of stream.getTracks()) track.stop();
    const mime = (recorder.mimeType || type || "audio/webm").split(";")[0];
    const suffix = { "audio/ogg": "ogg", "audio/mp4": "m4a" }[mime] || "webm";
    if (chunks.length > 0) {
      const at = new Date().toISOString().slice(0, 19).replace(/[-:T]/g, "");
      chosen.push(new File(chunks, `voice-note-${at}.${suffix}`, { type: mime }));
      showChosen();
    }
    recorder = null;
    recording(false);
  });
  recorder.start();
  say("");
  recording(true);
}
if (window.MediaRecorder && navigator.mediaDevices?.getUserMedia) {
  input.dataset.placeholder = input.placeholder;
  record.hidden = false;
  record.addEventListener("click", () => (recorder ? recorder.stop() : startRecording()));
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
  } else if (type === "error" && data.fallback) {
    // The stream broke and the answer is asked for again: what came so far is dropped, the whole answer follows.
    state.deltas = 0;
    text.textContent = labels.working;
  } else if (type === "error") {
    if (data.retrying) state.deltas = 0; // the next try writes its answer afresh
    text.textContent = data.retrying ? labels.retrying : data.message || labels.failed;
  } else if (type === "stream_end") {
    if (typeof data.reply === "string") text.textContent = data.reply;
    for (const media of data.media || []) {
      const img = document.createElement("img");
      img.className = "chart";
      img.src = media.url;
      img.alt = media.description || labels.chart; // what the chart shows, in words
      bubble.append(img);
    }
    optionButtons(bubble, data.options);
    bubble.classList.remove("working");
    bubble.dataset.outcome = data.outcome || "";
    bubble.append(clock());
  }
}

// While the files that came with a message are read (OCR, speech-to-text), before FAA's first step.
function reading(files) {
  if (files.some((file) => file.type.startsWith("audio/"))) return steps.hear_voice;
  if (files.some((file) => file.type.startsWith("image/"))) return steps.read_photo;
  return files.length > 0 ? steps.read_file : labels.working;
}

// A message the server refused before taking it (a file of a kind or size it does not keep): nothing was stored,
// so the member gets back what they wrote and chose, with the reason.
class Refused extends Error {}

function request(text, files) {
  const headers = { "X-CSRF-Token": csrf };
  const id = messageId();
  if (files.length === 0) {
    headers["Content-Type"] = "application/json";
    return { headers, body: JSON.stringify({ text, client_message_id: id }) };
  }
  const body = new FormData();
  body.append("text", text);
  body.append("client_message_id", id);
  for (const file of files) body.append("file", file, file.name);
  return { headers, body };
}

async function send(text, files = []) {
  following = true;
  const mine = item("me", text, files);
  const bubble = item("faa working", reading(files));
  const state = { deltas: 0, steps: document.createElement("ul") };
  state.steps.className = "steps";
  bubble.prepend(state.steps);
  try {
    const response = await fetch("/app/chat/stream", { method: "POST", ...request(text, files) });
    if (response.status >= 400 && response.status < 500) {
      const answer = await response.json().catch(() => ({}));
      throw new Refused(answer.error?.message || labels.failed);
    }
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
    if (error instanceof Refused) {
      mine.remove();
      bubble.remove();
      if (!input.value) input.value = text;
      chosen = [...files, ...chosen];
      showChosen();
      say(error.message);
      return;
    }
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
  if (form !== composer) {
    form.closest(".options")?.remove();
    send(text);
    return;
  }
  if (!text && chosen.length === 0) return;
  const files = chosen;
  chosen = [];
  showChosen();
  input.value = "";
  say("");
  send(text, files);
});

// An answer still being written when the chat was opened (the member reloaded, or came back to the page): it
// arrives here when it is ready.
async function awaitReply(bubble) {
  for (let attempt = 0; attempt < 40; attempt += 1) {
    let response;
    try {
      response = await fetch(`/app/chat/replies/${bubble.dataset.pending}`, { headers: { Accept: "application/json" } });
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      continue;
    }
    if (response.status === 200) {
      handle(bubble, "stream_end", await response.json(), { deltas: 0, steps: document.createElement("ul") });
      bubble.classList.remove("pending");
      delete bubble.dataset.pending;
      return;
    }
    if (response.status !== 204) return;
  }
}
for (const bubble of log.querySelectorAll("[data-pending]")) awaitReply(bubble);

// A reminder or digest delivered while the chat is open is FAA's newest message here (app.js receives it).
document.addEventListener("faa:notification", (event) => {
  event.preventDefault();
  const bubble = item("faa note", event.detail.text);
  bubble.dataset.notification = event.detail.id;
  bubble.append(clock());
});

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    composer.requestSubmit();
  }
});
reveal();
