/**
 * A first-in first-out queue that takes from the front without moving what is behind
 * (`Array.shift` moves every element: a connect storm queues thousands of waiters).
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The front item, left in place. */
  peek(): T | undefined {
    return this.size > 0 ? this.items[this.head] : undefined;
  }

  /** Takes the front item. */
  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
