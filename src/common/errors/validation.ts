import { applyDecorators, ValidationError, ValidationPipe } from '@nestjs/common';
import { IsObject, ValidateNested } from 'class-validator';
import { ApiError } from './api-error';
import { cacheValidationMetadata } from './validation-metadata-cache';

/** Finds the first failing constraint and names its field by its full path (e.g. config.model_id). */
export function firstValidationMessage(errors: ValidationError[], parent = ''): string | null {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) {
      const message = mostBasicFailure(error.constraints);
      if (message && namesItsPath(message, error.property)) {
        return parent ? `${parent}.${message}` : message;
      }
      if (message) return `${path}: ${withoutPropertyName(message, error.property)}`;
    }
    const nested = firstValidationMessage(error.children ?? [], path);
    if (nested) return nested;
  }
  return null;
}

/**
 * Tolerant reader: properties a DTO does not declare (at any depth of a validated nested DTO, and
 * in query DTOs) are stripped and ignored, so a newer SDK's fields never break a request; declared
 * ones keep their strict checks. Free-form objects (`metadata`, MCP server entries) are kept whole.
 */
export function createValidationPipe(): ValidationPipe {
  cacheValidationMetadata();
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: false,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) =>
      new ApiError('invalid_request', firstValidationMessage(errors) ?? 'request is not valid'),
  });
}

/** A parser's message that names the property or an element below it (`egress_allow.2.host: …`). */
function namesItsPath(message: string, property: string): boolean {
  return message.startsWith(`${property}.`) || message.startsWith(`${property}:`);
}

/** class-validator starts its messages with the property name; the path already says it. */
function withoutPropertyName(message: string, property: string): string {
  for (const lead of [`property ${property} `, `${property} `]) {
    if (message.startsWith(lead)) return message.slice(lead.length);
  }
  return message;
}

/** Type errors say more than range errors about a value of the wrong type: report them first. */
const BASIC_CONSTRAINTS = [
  'isString',
  'isInt',
  'isNumber',
  'isBoolean',
  'isArray',
  'isObject',
  'isBase64',
  'isIn',
];

function mostBasicFailure(constraints: Record<string, string>): string | undefined {
  const basic = BASIC_CONSTRAINTS.find((name) => constraints[name]);
  return basic ? constraints[basic] : Object.values(constraints)[0];
}

/**
 * `@ValidateNested({ each: true })` that also requires every element to be an object: on its own,
 * class-validator walks an element that is an array as more elements, so `[[]]` passed as a list
 * of DTOs and reached services as an array (a fuzz find: 500s).
 */
export function ValidateNestedEach(): PropertyDecorator {
  return applyDecorators(IsObject({ each: true }), ValidateNested({ each: true }));
}

/**
 * `@ValidateNested()` that also requires the value to be an object: on its own, class-validator
 * walks an array as a list of DTOs, so `"repository": []` passed and reached the service (a fuzz
 * find: 500s).
 */
export function ValidateNestedObject(): PropertyDecorator {
  return applyDecorators(IsObject(), ValidateNested());
}
