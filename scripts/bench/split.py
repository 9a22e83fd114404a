"""One logical Bloom filter split over N keys of a Redis Cluster (docs/cluster-split.md).

Each item belongs to exactly one key: the share of the slot range that the item's CRC16 (the
function the cluster hashes key names with; binascii.crc_hqx is it) falls in. Key i carries a
hash tag whose slot lies in share i, so the N keys sit on N distinct slots spread over the
range, and over the nodes holding it. All of an item's probes stay in its one key.
"""

import binascii
import math

SLOTS = 16384


def part_of(item, parts):
    """The key index (of `parts`) that `item` (bytes or str) belongs to."""
    if isinstance(item, str):
        item = item.encode()
    return binascii.crc_hqx(item, 0) % SLOTS * parts // SLOTS


def part_keys(name, parts):
    """The N key names: `name:{tag}`, the tag the first decimal number in share i."""
    keys = []
    for part in range(parts):
        tag = 0
        while part_of(str(tag), parts) != part:
            tag += 1
        keys.append(f"{name}:{{{tag}}}")
    return keys


class SplitBloom:
    """A logical filter over `parts` keys through `client`, a redis-py RedisCluster (or any
    client whose pipeline routes each command by its key)."""

    def __init__(self, client, name, parts):
        self.client = client
        self.keys = part_keys(name, parts)

    def key_of(self, item):
        return self.keys[part_of(item, len(self.keys))]

    def reserve(self, error_rate, capacity, *options):
        """BF.RESERVE of every key for its share of `capacity`, plus four standard
        deviations of a binomial share so that no key outgrows its first link."""
        share = capacity / len(self.keys)
        per_key = math.ceil(share + 4 * math.sqrt(share))
        pipe = self.client.pipeline()
        for key in self.keys:
            pipe.execute_command("BF.RESERVE", key, error_rate, per_key, *options)
        return pipe.execute()

    def add(self, item):
        return self.client.execute_command("BF.ADD", self.key_of(item), item)

    def exists(self, item):
        return self.client.execute_command("BF.EXISTS", self.key_of(item), item)

    def madd(self, items):
        return self._grouped("BF.MADD", items)

    def mexists(self, items):
        return self._grouped("BF.MEXISTS", items)

    def _grouped(self, command, items):
        """One `command key items...` per key, in one pipeline; replies in the items' order."""
        items = list(items)
        groups = {}
        for index, item in enumerate(items):
            groups.setdefault(self.key_of(item), []).append(index)
        pipe = self.client.pipeline()
        for key, indexes in groups.items():
            pipe.execute_command(command, key, *(items[i] for i in indexes))
        out = [None] * len(items)
        for indexes, replies in zip(groups.values(), pipe.execute()):
            for index, reply in zip(indexes, replies):
                out[index] = reply
        return out
