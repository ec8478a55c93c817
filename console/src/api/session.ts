/** The signed-in API key lives in sessionStorage: gone when the tab closes. */
const KEY = 'ambient.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}
