import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';

/**
 * A class-validator decorator running a parser on the property: `parse` throws an error of class
 * `refusal` whose message names the element below the property (`egress_allow.2.host: …`,
 * `approvals.1.command: …`); the validation pipe keeps such a message whole under the parent's
 * path (firstValidationMessage). Any other error is a bug and is thrown on.
 */
export function parsedBy(
  name: string,
  parse: (input: unknown, field: string) => unknown,
  refusal: abstract new (...args: never[]) => Error,
  options?: ValidationOptions,
): PropertyDecorator {
  return (object: object, propertyName: string | symbol): void => {
    const problems = new WeakMap<object, string>();
    registerDecorator({
      name,
      target: object.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          try {
            parse(value, args.property);
            return true;
          } catch (err) {
            if (!(err instanceof refusal)) throw err;
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
