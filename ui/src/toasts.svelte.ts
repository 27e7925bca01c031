// Short messages at the corner of the window (at the top on a phone).

export type Toast = { id: number; text: string; kind: "ok" | "error" };

export const toasts = $state<Toast[]>([]);
let next = 0;

function remove(id: number) {
  const i = toasts.findIndex((t) => t.id === id);
  if (i >= 0) toasts.splice(i, 1);
}

/** How long a message stays: an error longer; on a phone, where messages sit over the top of
 * the proposal on screen (the next one, once one is decided), a confirmation briefly. */
function lasts(kind: "ok" | "error"): number {
  const phone = typeof window !== "undefined" && window.matchMedia?.("(max-width: 720px)").matches;
  return kind === "error" ? 8000 : phone ? 2000 : 4000;
}

/** Shows `text` for a few seconds. */
export function toast(text: string, kind: "ok" | "error" = "ok") {
  const id = ++next;
  toasts.push({ id, text, kind });
  setTimeout(() => remove(id), lasts(kind));
}

/** Removes one message (the person tapped it away). */
export function dismiss(id: number) {
  remove(id);
}
