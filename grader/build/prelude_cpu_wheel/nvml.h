/* Stand-in for nvml.h (see README.md here): the functions c10/cuda/driver_api.h takes
   the types of (decltype(&name)); it never calls them itself. */
#pragma once

typedef enum { NVML_SUCCESS = 0 } nvmlReturn_t;
struct nvmlDevice_st;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlPciInfo_st { char busId[32]; unsigned int domain, bus, device, pciDeviceId, pciSubSystemId; } nvmlPciInfo_t;
typedef struct nvmlProcessInfo_st { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;
typedef enum { NVML_NVLINK_DEVICE_TYPE_GPU = 0, NVML_NVLINK_DEVICE_TYPE_IBMNPU = 1, NVML_NVLINK_DEVICE_TYPE_SWITCH = 2,
               NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 255 } nvmlIntNvLinkDeviceType_t;
typedef struct nvmlGpuFabricInfo_v2_st { unsigned int version; unsigned char clusterUuid[16]; nvmlReturn_t status;
                                         unsigned int cliqueId; unsigned char state; unsigned int healthMask; } nvmlGpuFabricInfoV_t;

#ifdef __cplusplus
extern "C" {
#endif
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                 nvmlIntNvLinkDeviceType_t* pNvLinkDeviceType);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* infoCount,
                                                  nvmlProcessInfo_t* infos);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion);
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t* gpuFabricInfo);
#ifdef __cplusplus
}
#endif
