//! The closed vocabularies of Argo CD's status fields: sync status, operation phase, per-resource
//! result, hook type and sync phase. Each serializes to Argo's exact string.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Argo CD's string for this value.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => stringify!($variant)),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum! {
    /// Whether live state matches Git (`status.sync.status`, `status.resources[].status`).
    SyncStatusCode {
        /// Live state matches the desired state.
        Synced,
        /// Live state differs from the desired state.
        OutOfSync,
        /// The comparison could not be made.
        Unknown,
    }
}

string_enum! {
    /// Phase of an operation (`status.operationState.phase`, `syncResult.resources[].hookPhase`).
    OperationPhase {
        /// In progress.
        Running,
        /// Being stopped.
        Terminating,
        /// Finished unsuccessfully.
        Failed,
        /// Finished with an error.
        Error,
        /// Finished successfully.
        Succeeded,
    }
}

impl OperationPhase {
    /// Whether the operation is over (Failed, Error or Succeeded).
    pub fn is_completed(self) -> bool {
        matches!(self, Self::Failed | Self::Error | Self::Succeeded)
    }
}

string_enum! {
    /// Outcome of syncing one resource (`syncResult.resources[].status`).
    ResultCode {
        /// Applied.
        Synced,
        /// Apply failed.
        SyncFailed,
        /// Deleted because Git no longer declares it.
        Pruned,
        /// Needed pruning but pruning was not allowed.
        PruneSkipped,
    }
}

string_enum! {
    /// Hook type of a resource (`argocd.argoproj.io/hook`, `syncResult.resources[].hookType`).
    HookType {
        /// Before the Sync phase.
        PreSync,
        /// With the other resources.
        Sync,
        /// After a successful, healthy Sync phase.
        PostSync,
        /// When the sync failed.
        SyncFail,
        /// Never applied.
        Skip,
        /// Before the Application is deleted.
        PreDelete,
        /// After the Application is deleted.
        PostDelete,
    }
}

string_enum! {
    /// Phase of a sync a resource runs in (`syncResult.resources[].syncPhase`).
    SyncPhase {
        /// Hooks before the sync.
        PreSync,
        /// The sync itself.
        Sync,
        /// Hooks after a successful sync.
        PostSync,
        /// Hooks after a failed sync.
        SyncFail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_use_argo_strings() {
        assert_eq!(
            serde_json::to_value(SyncStatusCode::OutOfSync).unwrap(),
            "OutOfSync"
        );
        assert_eq!(
            serde_json::to_value(ResultCode::PruneSkipped).unwrap(),
            "PruneSkipped"
        );
        let phase: OperationPhase = serde_json::from_value("Succeeded".into()).unwrap();
        assert!(phase.is_completed());
        assert!(!OperationPhase::Running.is_completed());
        assert_eq!(HookType::PostDelete.to_string(), "PostDelete");
        assert!(serde_json::from_value::<SyncPhase>("Skip".into()).is_err());
    }
}
