export const X = 1;
