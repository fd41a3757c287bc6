import { MemoryDisk, memoryStore } from '../../test/doubles/memory-store.js';
import { describeStoreContract } from '../../test/store-contract.js';

describeStoreContract('in-memory', async () => {
  const disk = new MemoryDisk();
  return {
    async open() {
      const { store, backend } = memoryStore(disk);
      return { store, breakStorage: async () => backend.breakDisk() };
    },
    async remove() {},
  };
});
