//! The kinds of property the generic readers of `include/cucore/system.h` take: [`Query`] for
//! [`SystemDevice::query`](super::SystemDevice::query), [`Text`], [`Control`] and [`Relation`].
//! Each variant is the C enumerator of the same name; the header documents, per variant, the NVML
//! call it makes, its arguments and the values it gives, in order.

use cucore_sys as sys;

macro_rules! c_enum {
    ($(#[$m:meta])* $name:ident : $raw:ty { $($(#[$vm:meta])* $variant:ident = $c:ident,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vm])* $variant,)*
        }
        impl $name {
            /// The C enumerator.
            pub fn raw(self) -> $raw {
                match self {
                    $($name::$variant => sys::$c,)*
                }
            }
        }
    };
}

c_enum! {
    /// A numeric property of a device (`cucore_system_query_t`).
    Query: sys::cucore_system_query_t {
        /// `CUCORE_SYSTEM_QUERY_ARCHITECTURE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Architecture = CUCORE_SYSTEM_QUERY_ARCHITECTURE,
        /// `CUCORE_SYSTEM_QUERY_BRAND`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Brand = CUCORE_SYSTEM_QUERY_BRAND,
        /// `CUCORE_SYSTEM_QUERY_MINOR_NUMBER`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MinorNumber = CUCORE_SYSTEM_QUERY_MINOR_NUMBER,
        /// `CUCORE_SYSTEM_QUERY_MODULE_ID`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        ModuleId = CUCORE_SYSTEM_QUERY_MODULE_ID,
        /// `CUCORE_SYSTEM_QUERY_NUMA_NODE_ID`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        NumaNodeId = CUCORE_SYSTEM_QUERY_NUMA_NODE_ID,
        /// `CUCORE_SYSTEM_QUERY_C2C_ENABLED`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        C2cEnabled = CUCORE_SYSTEM_QUERY_C2C_ENABLED,
        /// `CUCORE_SYSTEM_QUERY_PERSISTENCE_MODE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PersistenceMode = CUCORE_SYSTEM_QUERY_PERSISTENCE_MODE,
        /// `CUCORE_SYSTEM_QUERY_DISPLAY_CONNECTED`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        DisplayConnected = CUCORE_SYSTEM_QUERY_DISPLAY_CONNECTED,
        /// `CUCORE_SYSTEM_QUERY_DISPLAY_ACTIVE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        DisplayActive = CUCORE_SYSTEM_QUERY_DISPLAY_ACTIVE,
        /// `CUCORE_SYSTEM_QUERY_COMPUTE_CAPABILITY`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        ComputeCapability = CUCORE_SYSTEM_QUERY_COMPUTE_CAPABILITY,
        /// `CUCORE_SYSTEM_QUERY_ADDRESSING_MODE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        AddressingMode = CUCORE_SYSTEM_QUERY_ADDRESSING_MODE,
        /// `CUCORE_SYSTEM_QUERY_PERFORMANCE_STATE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PerformanceState = CUCORE_SYSTEM_QUERY_PERFORMANCE_STATE,
        /// `CUCORE_SYSTEM_QUERY_SUPPORTED_PSTATES`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        SupportedPstates = CUCORE_SYSTEM_QUERY_SUPPORTED_PSTATES,
        /// `CUCORE_SYSTEM_QUERY_CLOCK_EVENT_REASONS`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        ClockEventReasons = CUCORE_SYSTEM_QUERY_CLOCK_EVENT_REASONS,
        /// `CUCORE_SYSTEM_QUERY_SUPPORTED_CLOCK_EVENT_REASONS`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        SupportedClockEventReasons = CUCORE_SYSTEM_QUERY_SUPPORTED_CLOCK_EVENT_REASONS,
        /// `CUCORE_SYSTEM_QUERY_SUPPORTED_EVENT_TYPES`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        SupportedEventTypes = CUCORE_SYSTEM_QUERY_SUPPORTED_EVENT_TYPES,
        /// `CUCORE_SYSTEM_QUERY_AUTO_BOOSTED_CLOCKS`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        AutoBoostedClocks = CUCORE_SYSTEM_QUERY_AUTO_BOOSTED_CLOCKS,
        /// `CUCORE_SYSTEM_QUERY_CLOCK`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Clock = CUCORE_SYSTEM_QUERY_CLOCK,
        /// `CUCORE_SYSTEM_QUERY_MAX_CLOCK`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MaxClock = CUCORE_SYSTEM_QUERY_MAX_CLOCK,
        /// `CUCORE_SYSTEM_QUERY_MAX_CUSTOMER_BOOST_CLOCK`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MaxCustomerBoostClock = CUCORE_SYSTEM_QUERY_MAX_CUSTOMER_BOOST_CLOCK,
        /// `CUCORE_SYSTEM_QUERY_PSTATE_CLOCK_RANGE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PstateClockRange = CUCORE_SYSTEM_QUERY_PSTATE_CLOCK_RANGE,
        /// `CUCORE_SYSTEM_QUERY_CLOCK_OFFSETS`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        ClockOffsets = CUCORE_SYSTEM_QUERY_CLOCK_OFFSETS,
        /// `CUCORE_SYSTEM_QUERY_FAN_COUNT`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        FanCount = CUCORE_SYSTEM_QUERY_FAN_COUNT,
        /// `CUCORE_SYSTEM_QUERY_FAN_SPEED`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        FanSpeed = CUCORE_SYSTEM_QUERY_FAN_SPEED,
        /// `CUCORE_SYSTEM_QUERY_FAN_SPEED_RPM`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        FanSpeedRpm = CUCORE_SYSTEM_QUERY_FAN_SPEED_RPM,
        /// `CUCORE_SYSTEM_QUERY_FAN_TARGET_SPEED`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        FanTargetSpeed = CUCORE_SYSTEM_QUERY_FAN_TARGET_SPEED,
        /// `CUCORE_SYSTEM_QUERY_FAN_SPEED_RANGE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        FanSpeedRange = CUCORE_SYSTEM_QUERY_FAN_SPEED_RANGE,
        /// `CUCORE_SYSTEM_QUERY_FAN_CONTROL_POLICY`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        FanControlPolicy = CUCORE_SYSTEM_QUERY_FAN_CONTROL_POLICY,
        /// `CUCORE_SYSTEM_QUERY_COOLER`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Cooler = CUCORE_SYSTEM_QUERY_COOLER,
        /// `CUCORE_SYSTEM_QUERY_ATTRIBUTES`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Attributes = CUCORE_SYSTEM_QUERY_ATTRIBUTES,
        /// `CUCORE_SYSTEM_QUERY_BAR1_MEMORY`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Bar1Memory = CUCORE_SYSTEM_QUERY_BAR1_MEMORY,
        /// `CUCORE_SYSTEM_QUERY_MEMORY`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Memory = CUCORE_SYSTEM_QUERY_MEMORY,
        /// `CUCORE_SYSTEM_QUERY_PCI_INFO`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PciInfo = CUCORE_SYSTEM_QUERY_PCI_INFO,
        /// `CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_GENERATION`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PcieMaxLinkGeneration = CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_GENERATION,
        /// `CUCORE_SYSTEM_QUERY_PCIE_GPU_MAX_LINK_GENERATION`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PcieGpuMaxLinkGeneration = CUCORE_SYSTEM_QUERY_PCIE_GPU_MAX_LINK_GENERATION,
        /// `CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_WIDTH`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PcieMaxLinkWidth = CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_WIDTH,
        /// `CUCORE_SYSTEM_QUERY_PCIE_LINK_GENERATION`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PcieLinkGeneration = CUCORE_SYSTEM_QUERY_PCIE_LINK_GENERATION,
        /// `CUCORE_SYSTEM_QUERY_PCIE_LINK_WIDTH`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PcieLinkWidth = CUCORE_SYSTEM_QUERY_PCIE_LINK_WIDTH,
        /// `CUCORE_SYSTEM_QUERY_PCIE_THROUGHPUT`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PcieThroughput = CUCORE_SYSTEM_QUERY_PCIE_THROUGHPUT,
        /// `CUCORE_SYSTEM_QUERY_PCIE_REPLAY_COUNTER`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PcieReplayCounter = CUCORE_SYSTEM_QUERY_PCIE_REPLAY_COUNTER,
        /// `CUCORE_SYSTEM_QUERY_DYNAMIC_PSTATES`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        DynamicPstates = CUCORE_SYSTEM_QUERY_DYNAMIC_PSTATES,
        /// `CUCORE_SYSTEM_QUERY_PROCESSES`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Processes = CUCORE_SYSTEM_QUERY_PROCESSES,
        /// `CUCORE_SYSTEM_QUERY_REPAIR_STATUS`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        RepairStatus = CUCORE_SYSTEM_QUERY_REPAIR_STATUS,
        /// `CUCORE_SYSTEM_QUERY_TEMPERATURE_THRESHOLD`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        TemperatureThreshold = CUCORE_SYSTEM_QUERY_TEMPERATURE_THRESHOLD,
        /// `CUCORE_SYSTEM_QUERY_TEMPERATURE_MARGIN`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        TemperatureMargin = CUCORE_SYSTEM_QUERY_TEMPERATURE_MARGIN,
        /// `CUCORE_SYSTEM_QUERY_THERMAL_SETTINGS`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        ThermalSettings = CUCORE_SYSTEM_QUERY_THERMAL_SETTINGS,
        /// `CUCORE_SYSTEM_QUERY_INFOROM_CHECKSUM`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        InforomChecksum = CUCORE_SYSTEM_QUERY_INFOROM_CHECKSUM,
        /// `CUCORE_SYSTEM_QUERY_BBX_FLUSH_TIME`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        BbxFlushTime = CUCORE_SYSTEM_QUERY_BBX_FLUSH_TIME,
        /// `CUCORE_SYSTEM_QUERY_NVLINK_COUNT`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        NvlinkCount = CUCORE_SYSTEM_QUERY_NVLINK_COUNT,
        /// `CUCORE_SYSTEM_QUERY_NVLINK_VERSION`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        NvlinkVersion = CUCORE_SYSTEM_QUERY_NVLINK_VERSION,
        /// `CUCORE_SYSTEM_QUERY_NVLINK_STATE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        NvlinkState = CUCORE_SYSTEM_QUERY_NVLINK_STATE,
        /// `CUCORE_SYSTEM_QUERY_MIG_MODE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MigMode = CUCORE_SYSTEM_QUERY_MIG_MODE,
        /// `CUCORE_SYSTEM_QUERY_IS_MIG_DEVICE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        IsMigDevice = CUCORE_SYSTEM_QUERY_IS_MIG_DEVICE,
        /// `CUCORE_SYSTEM_QUERY_MAX_MIG_DEVICES`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MaxMigDevices = CUCORE_SYSTEM_QUERY_MAX_MIG_DEVICES,
        /// `CUCORE_SYSTEM_QUERY_CPU_AFFINITY`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        CpuAffinity = CUCORE_SYSTEM_QUERY_CPU_AFFINITY,
        /// `CUCORE_SYSTEM_QUERY_MEMORY_AFFINITY`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MemoryAffinity = CUCORE_SYSTEM_QUERY_MEMORY_AFFINITY,
    }
}

c_enum! {
    /// A text property of a device (`cucore_system_text_t`).
    Text: sys::cucore_system_text_t {
        /// `CUCORE_SYSTEM_TEXT_SERIAL`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        Serial = CUCORE_SYSTEM_TEXT_SERIAL,
        /// `CUCORE_SYSTEM_TEXT_BOARD_PART_NUMBER`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        BoardPartNumber = CUCORE_SYSTEM_TEXT_BOARD_PART_NUMBER,
        /// `CUCORE_SYSTEM_TEXT_INFOROM_IMAGE_VERSION`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        InforomImageVersion = CUCORE_SYSTEM_TEXT_INFOROM_IMAGE_VERSION,
        /// `CUCORE_SYSTEM_TEXT_INFOROM_VERSION`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        InforomVersion = CUCORE_SYSTEM_TEXT_INFOROM_VERSION,
    }
}

c_enum! {
    /// A change to a device (`cucore_system_control_t`); most need root.
    Control: sys::cucore_system_control_t {
        /// `CUCORE_SYSTEM_CONTROL_PERSISTENCE_MODE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        PersistenceMode = CUCORE_SYSTEM_CONTROL_PERSISTENCE_MODE,
        /// `CUCORE_SYSTEM_CONTROL_SET_CPU_AFFINITY`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        SetCpuAffinity = CUCORE_SYSTEM_CONTROL_SET_CPU_AFFINITY,
        /// `CUCORE_SYSTEM_CONTROL_CLEAR_CPU_AFFINITY`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        ClearCpuAffinity = CUCORE_SYSTEM_CONTROL_CLEAR_CPU_AFFINITY,
        /// `CUCORE_SYSTEM_CONTROL_FAN_SPEED`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        FanSpeed = CUCORE_SYSTEM_CONTROL_FAN_SPEED,
        /// `CUCORE_SYSTEM_CONTROL_FAN_DEFAULT_SPEED`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        FanDefaultSpeed = CUCORE_SYSTEM_CONTROL_FAN_DEFAULT_SPEED,
        /// `CUCORE_SYSTEM_CONTROL_MIG_MODE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MigMode = CUCORE_SYSTEM_CONTROL_MIG_MODE,
        /// `CUCORE_SYSTEM_CONTROL_VALIDATE_INFOROM`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        ValidateInforom = CUCORE_SYSTEM_CONTROL_VALIDATE_INFOROM,
    }
}

c_enum! {
    /// Devices related to a device (`cucore_system_relation_t`).
    Relation: sys::cucore_system_relation_t {
        /// `CUCORE_SYSTEM_RELATION_NEAREST_GPUS`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        NearestGpus = CUCORE_SYSTEM_RELATION_NEAREST_GPUS,
        /// `CUCORE_SYSTEM_RELATION_MIG_DEVICE`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MigDevice = CUCORE_SYSTEM_RELATION_MIG_DEVICE,
        /// `CUCORE_SYSTEM_RELATION_MIG_PARENT`: see its comment in include/cucore/system.h (NVML call, arguments, values).
        MigParent = CUCORE_SYSTEM_RELATION_MIG_PARENT,
    }
}
