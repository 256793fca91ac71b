// Keeps a scrolling box pinned to its end while text is added, unless the
// reader has scrolled up to read something earlier.
const NEAR_END_PX = 24;

export function followEnd(box, change) {
  const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight <= NEAR_END_PX;
  change();
  if (atEnd) box.scrollTop = box.scrollHeight;
}
