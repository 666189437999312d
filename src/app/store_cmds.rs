//! `cpuscope runs|show|export|import|delete`: the stored runs.
