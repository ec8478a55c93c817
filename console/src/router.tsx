import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** The console lives under /console; routes are the path below it ("/runs/<id>"). */
export const BASE = '/console';

function currentRoute(): string {
  const path = window.location.pathname;
  const route = path.startsWith(BASE) ? path.slice(BASE.length) : path;
  return (route || '/') + window.location.search;
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

export function navigate(route: string, replace = false): void {
  const url = `${BASE}${route}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((listener) => listener());
  window.scrollTo(0, 0);
}

/** The current route, path and query, re-rendered on navigation. */
export function useRoute(): { path: string; query: URLSearchParams } {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  const [path, search = ''] = route.split('?');
  return { path, query: new URLSearchParams(search) };
}

/** A real link (new tab, copy address work) that navigates in place on a plain click. */
export function Link({
  to,
  ...props
}: { to: string } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
      return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={`${BASE}${to}`} onClick={onClick} {...props} />;
}
