// The admin API beyond /admin/shutdown (which lives with the node endpoints): node scavenge and index merge.
export {
  currentScavengeDto,
  currentScavengeRoute,
  lastScavengeDto,
  lastScavengeRoute,
  mergeIndexesDto,
  mergeIndexesRoute,
  scavengeLink,
  scavengeRoutes,
  scavengeStartedDto,
  startScavengeRoute,
  stopScavengeRoute
} from "./scavengeRoutes.js"
export {
  MAX_SCAVENGE_THREADS,
  ScavengeParamMessages,
  parseScavengeQuery,
  type ScavengeQuery
} from "./scavengeParams.js"
export { renderDto, renderString, type Dto, type DtoField, type DtoValue } from "./adminDocuments.js"
