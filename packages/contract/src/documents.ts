// The bundled documents as modules: importing them costs one parse of each document, once.
export { asyncapiDocument } from './generated/asyncapi.gen.ts';
export { openapiDocument } from './generated/openapi.gen.ts';
