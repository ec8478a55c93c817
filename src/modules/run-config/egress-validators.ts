import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';
import {
  EgressRuleError,
  parseEgressRules,
  parseHostPatterns,
} from '../../common/egress/egress-rules';

/**
 * A class-validator decorator running one of the egress parsers on the property. The parser's
 * message names the element below the property (`egress_allow.2.host: …`); the validation
 * pipe keeps such a message whole under the parent's path (firstValidationMessage).
 */
function parsedBy(parse: (input: unknown, field: string) => unknown, options?: ValidationOptions) {
  return (object: object, propertyName: string | symbol): void => {
    const problems = new WeakMap<object, string>();
    registerDecorator({
      name: 'egressParser',
      target: object.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          try {
            parse(value, args.property);
            return true;
          } catch (err) {
            if (!(err instanceof EgressRuleError)) throw err;
            problems.set(args.object, err.message);
            return false;
          }
        },
        defaultMessage(args: ValidationArguments) {
          return problems.get(args.object) ?? `${args.property}: is not valid`;
        },
      },
    });
  };
}

/** `egress_allow`: a list of rules `parseEgressRules` accepts. */
export function IsEgressRules(options?: ValidationOptions): PropertyDecorator {
  return parsedBy(parseEgressRules, options);
}

/** A secret's `inject_hosts`: host patterns `parseHostPatterns` accepts. */
export function IsHostPatterns(options?: ValidationOptions): PropertyDecorator {
  return parsedBy(parseHostPatterns, options);
}
