import { MemoryDisk, memoryStore } from './memory-store.js';
import { describeStoreContract } from './store-contract.js';

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
