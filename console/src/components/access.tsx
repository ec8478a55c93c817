import { useEffect, useState } from 'react';
import type { Permission } from '../../../src/common/auth/roles';
import { api, data, type Schemas } from '../api/client';
import { storedKey } from '../api/session';
import { refusalText } from '../format/access';

type Caller = Schemas['CurrentCaller'];

/** GET /me once per credential (the header, the limits and every form ask who is signed in). */
let cached: { key: string | null; caller: Promise<Caller> } | null = null;

function callerPromise(): Promise<Caller> {
  const key = storedKey();
  if (!cached || cached.key !== key) {
    const caller = data(api.GET('/me'));
    cached = { key, caller };
    // A failed answer is asked again next time.
    caller.catch(() => {
      if (cached?.caller === caller) cached = null;
    });
  }
  return cached.caller;
}

/** Who is signed in: undefined until known (or when it cannot be read). */
export function useCaller(): Caller | undefined {
  const [caller, setCaller] = useState<Caller>();
  useEffect(() => {
    let current = true;
    callerPromise().then(
      (value) => current && setCaller(value),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, []);
  return caller;
}

/** `refusalText` for the signed-in caller. */
export function useRefusal(permission: Permission, what: string): string | null {
  return refusalText(useCaller(), permission, what);
}

/** The explanation above a form the caller may not use (the form itself is disabled). */
export function RefusalNotice({ refusal }: { refusal: string | null }) {
  if (!refusal) return null;
  return (
    <p className="notice refusal" role="note" data-testid="role-refusal">
      {refusal}
    </p>
  );
}
