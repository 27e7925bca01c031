// What every component test needs from the browser that jsdom lacks.

// The inbox list only uses ResizeObserver for its height.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
} as unknown as typeof ResizeObserver;
