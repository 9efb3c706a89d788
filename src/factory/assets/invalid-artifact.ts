/** A built artifact failed its validation; the build is not stored and the job records why. */
export class InvalidArtifactError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidArtifactError';
  }
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvalidArtifactError(message);
}
