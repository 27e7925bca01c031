// Short messages at the corner of the window (at the top on a phone).

export type Toast = { id: number; text: string; kind: "ok" | "error"; about?: string };

export const toasts = $state<Toast[]>([]);
let next = 0;

function remove(id: number) {
  const i = toasts.findIndex((t) => t.id === id);
  if (i >= 0) toasts.splice(i, 1);
}

/** Shows `text` for a few seconds; `about`: the proposal it is about, when it is about one. */
export function toast(text: string, kind: "ok" | "error" = "ok", about?: string) {
  const id = ++next;
  toasts.push({ id, text, kind, about });
  setTimeout(() => remove(id), kind === "error" ? 8000 : 4000);
}

/** Removes one message (the person tapped it away). */
export function dismiss(id: number) {
  remove(id);
}

/** Another proposal is on screen: what was said about any other goes, so that nothing said of
 * the previous one covers the next or reads as if about it. */
export function showing(proposal: string) {
  for (const t of toasts.filter((t) => t.about !== undefined && t.about !== proposal)) remove(t.id);
}
