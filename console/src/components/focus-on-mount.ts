/**
 * A ref that focuses its element when it appears: an inline confirmation takes the focus from
 * the button that opened it (which goes away), so the keyboard lands on "Confirm".
 */
export function focusOnMount(element: HTMLElement | null): void {
  element?.focus();
}
