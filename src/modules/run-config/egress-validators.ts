import type { ValidationOptions } from 'class-validator';
import {
  EgressRuleError,
  parseEgressRules,
  parseHostPatterns,
} from '../../common/egress/egress-rules';
import { parsedBy } from './parsed-by';

/** `egress_allow`: a list of rules `parseEgressRules` accepts. */
export function IsEgressRules(options?: ValidationOptions): PropertyDecorator {
  return parsedBy('egressRules', parseEgressRules, EgressRuleError, options);
}

/** A secret's `inject_hosts`: host patterns `parseHostPatterns` accepts. */
export function IsHostPatterns(options?: ValidationOptions): PropertyDecorator {
  return parsedBy('hostPatterns', parseHostPatterns, EgressRuleError, options);
}
