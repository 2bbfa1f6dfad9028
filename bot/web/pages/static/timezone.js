// Preselect the browser's own timezone in a timezone list marked data-guess-timezone (setup, new member).
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
for (const select of document.querySelectorAll("select[data-guess-timezone]")) {
  if (zone && [...select.options].some((option) => option.value === zone)) {
    select.value = zone;
  }
}
