// The household page's invite: copy its sign-in link, or hand it to another app with the phone's share sheet
// (Web Share, where the browser has it). Without a clipboard (a plain-http address other than this machine) the
// link is selected for the member to copy.
const box = document.getElementById("invite-link");
const actions = document.getElementById("invite-actions");
if (box && actions) {
  const link = box.textContent.trim();
  const copy = document.getElementById("copy-link");
  const share = document.getElementById("share-link");
  const status = document.getElementById("invite-status");
  actions.hidden = false;

  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(link);
      status.textContent = copy.dataset.copied;
    } catch {
      const range = document.createRange();
      range.selectNodeContents(box);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      status.textContent = copy.dataset.select;
    }
  });

  const shared = { title: share.dataset.title, text: share.dataset.text, url: link };
  if (navigator.share && (!navigator.canShare || navigator.canShare(shared))) {
    share.hidden = false;
    share.addEventListener("click", () => navigator.share(shared).catch(() => {}));
  }
}
