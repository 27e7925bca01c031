// Short messages at the corner of the window.

export const toasts = $state<{ id: number; text: string; kind: "ok" | "error" }[]>([]);
let next = 0;

export function toast(text: string, kind: "ok" | "error" = "ok") {
  const id = ++next;
  toasts.push({ id, text, kind });
  setTimeout(() => {
    const i = toasts.findIndex((t) => t.id === id);
    if (i >= 0) toasts.splice(i, 1);
  }, kind === "error" ? 8000 : 4000);
}
