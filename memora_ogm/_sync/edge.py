# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""``QdrantDB(path=DIR)``'s engine: Qdrant Edge behind the qdrant-client calls the store
makes, so the layouts serve every engine (translation in ``edge_common``).

Edge holds the GIL through each call and locks its shards inside, so no store lock; calls
take about a millisecond, so they run on the event loop. Every write is flushed (Edge's
WAL survives a process crash, not a machine's). ``optimize()`` is never called: it holds
the GIL for minutes, and tenant-filtered searches are fast without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import qdrant_edge as edge
from qdrant_client import models
from qdrant_client.http import models as rest

from memora_ogm.vector_db import edge_common as common


class EdgeClient(common.EdgeFolder):
    """A folder of Edge shards, one per collection, with qdrant-client's methods."""

    def collection_exists(self, collection_name: str) -> bool:
        return common.is_shard(common.shard_folder(self.folder, collection_name))

    def get_collection(self, collection_name: str) -> models.CollectionInfo:
        schema = self._shard(collection_name).info().payload_schema
        return common.collection_info(common.shard_folder(self.folder, collection_name), schema)

    def create_collection(self, collection_name: str, **config: Any) -> bool:
        self._shard(collection_name, create=common.shard_config(**config))
        return True

    def create_payload_index(
        self,
        collection_name: str,
        field_name: str,
        field_schema: models.KeywordIndexParams,
        wait: bool = True,
    ) -> None:
        index = common.field_index(field_schema)
        self._update(collection_name, edge.UpdateOperation.create_field_index(field_name, index))

    def upsert(
        self, collection_name: str, points: Sequence[models.PointStruct], wait: bool = True
    ) -> None:
        operation = edge.UpdateOperation.upsert_points([common.point(one) for one in points])
        self._update(collection_name, operation)

    def delete(
        self,
        collection_name: str,
        points_selector: models.PointIdsList | models.FilterSelector,
        wait: bool = True,
    ) -> None:
        self._update(collection_name, common.selector_operation(points_selector))

    def query_batch_points(
        self, collection_name: str, requests: Sequence[models.QueryRequest]
    ) -> list[rest.QueryResponse]:
        batch = edge.QueryBatchRequest([common.query_request(request) for request in requests])
        return [
            common.query_response(points)
            for points in self._shard(collection_name).query_batch(batch)
        ]

    def facet(
        self,
        collection_name: str,
        key: str,
        facet_filter: models.Filter | None = None,
        limit: int = 10,
        exact: bool = False,
    ) -> models.FacetResponse:
        request = edge.FacetRequest(
            key, limit=limit, exact=exact, filter=common.condition_filter(facet_filter)
        )
        hits = self._shard(collection_name).facet(request).hits
        return models.FacetResponse(
            hits=[models.FacetValueHit(value=str(hit.value), count=hit.count) for hit in hits]
        )

    def count(
        self, collection_name: str, count_filter: models.Filter | None = None, exact: bool = True
    ) -> models.CountResult:
        """For ``memora-ogm vectors migrate``'s check that every point arrived."""
        request = edge.CountRequest(exact=exact, filter=common.condition_filter(count_filter))
        return models.CountResult(count=self._shard(collection_name).count(request))

    def scroll(
        self,
        collection_name: str,
        scroll_filter: models.Filter | None = None,
        limit: int = 10,
        offset: models.ExtendedPointId | None = None,
        with_payload: bool = True,
        with_vectors: bool = False,
    ) -> tuple[list[models.Record], models.ExtendedPointId | None]:
        request = edge.ScrollRequest(
            offset=None if offset is None else common.point_ids([offset])[0],
            limit=limit,
            filter=common.condition_filter(scroll_filter),
            with_payload=with_payload,
            with_vector=with_vectors,
        )
        found, following = self._shard(collection_name).scroll(request)
        records = [common.record(one, with_vectors) for one in found]
        return records, None if following is None else common.record_id(following)

    def retrieve(
        self,
        collection_name: str,
        ids: Sequence[models.ExtendedPointId],
        with_payload: bool = True,
        with_vectors: bool = False,
    ) -> list[models.Record]:
        found = self._shard(collection_name).retrieve(
            common.point_ids(ids), with_payload, with_vectors
        )
        return [common.record(one, with_vectors) for one in found]

    def close(self) -> None:
        self.release()
