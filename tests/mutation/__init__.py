"""Mutation testing of the reference implementation (issue 18): ``make mutation``, docs/mutation.md."""
