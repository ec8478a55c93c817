import type { EgressRule, EgressRuleInput } from '../../common/egress/egress-policy';
import { EgressRuleError, parseEgressRules } from '../../common/egress/egress-rules';
import { ApiError } from '../../common/errors/api-error';

/** One rule sent alone (`{"rule": …}`), parsed; a 400 naming `rule` when it is not valid. */
export function parseOneRule(input: EgressRuleInput, field = 'rule'): EgressRule {
  try {
    const [rule] = parseEgressRules([input], field);
    return rule;
  } catch (err) {
    if (!(err instanceof EgressRuleError)) throw err;
    // The parser names the list element (`rule.0.host`); here the rule is the field itself.
    throw ApiError.invalid(err.field.replace(`${field}.0`, field), err.detail);
  }
}

/** Whether `rules` already allow exactly what `rule` allows (same host, port and methods). */
export function listsRule(rules: readonly EgressRuleInput[], rule: EgressRule): boolean {
  return rules.some((input) => {
    let parsed: EgressRule[];
    try {
      parsed = parseEgressRules([input]);
    } catch {
      return false;
    }
    return parsed.some((existing) => sameRule(existing, rule));
  });
}

function sameRule(a: EgressRule, b: EgressRule): boolean {
  return (
    a.host === b.host &&
    a.wildcard === b.wildcard &&
    a.port === b.port &&
    JSON.stringify(a.methods ? [...a.methods].sort() : null) ===
      JSON.stringify(b.methods ? [...b.methods].sort() : null)
  );
}
