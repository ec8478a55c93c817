import { API_BASE } from './client';

/**
 * Names the server registers at an extension point (built-ins and loaded extensions), read from
 * the enum of the served OpenAPI document: the generated schema.d.ts knows only the built-ins.
 */
export async function registeredNames(schema: string, property: string): Promise<string[]> {
  const res = await fetch(`${API_BASE}/openapi.json`);
  if (!res.ok) throw new Error(`GET ${API_BASE}/openapi.json answered ${res.status}`);
  const document = (await res.json()) as {
    components?: { schemas?: Record<string, { properties?: Record<string, { enum?: unknown }> }> };
  };
  const values = document.components?.schemas?.[schema]?.properties?.[property]?.enum;
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : [];
}
